"""EVPI over a two-dimensional feature space, with the model drawn on top."""

from __future__ import annotations

import numpy as np
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_features, check_is_fitted

from skrbal._decision import DecisionProcess
from skrbal.plotting._curves import _pyplot

__all__ = ["EVPIDisplay"]


def _full_covariances(estimator, n_components: int, n_features: int):
    """Covariance matrices of a Gaussian classifier, whatever its storage."""
    if hasattr(estimator, "covariances_"):
        covariances = np.asarray(estimator.covariances_, dtype=float)
        kind = getattr(estimator, "covariance_type", "full")
    elif hasattr(estimator, "covariance_"):  # QDA with store_covariance=True
        covariances, kind = np.asarray(estimator.covariance_, dtype=float), "full"
    else:  # GaussianNB
        covariances, kind = np.asarray(estimator.var_, dtype=float), "diag"
    if kind == "full":
        return covariances
    if kind == "tied":
        return np.broadcast_to(covariances, (n_components, n_features, n_features))
    if kind == "diag":
        return np.stack([np.diag(row) for row in covariances])
    if kind == "spherical":
        return covariances[:, None, None] * np.eye(n_features)
    raise ValueError(f"unknown covariance_type {kind!r} of {type(estimator).__name__}.")


def _gaussian_components(estimator):
    """``(means, covariances)`` of a classifier with one Gaussian per class.

    Reads BayesianGMMClassifier, GaussianMixture (any covariance type),
    QuadraticDiscriminantAnalysis (with ``store_covariance=True``) and
    GaussianNB; ``None`` for any other model.
    """
    if hasattr(estimator, "means_") and (
        hasattr(estimator, "covariances_") or hasattr(estimator, "covariance_")
    ):
        means = np.asarray(estimator.means_, dtype=float)
    elif hasattr(estimator, "theta_") and hasattr(estimator, "var_"):
        means = np.asarray(estimator.theta_, dtype=float)
    else:
        return None
    covariances = _full_covariances(estimator, *means.shape)
    return means, covariances


def _ellipse(mean, covariance, n_std: float, **kwargs):
    """The ``n_std``-sigma contour of a 2-D Gaussian as a matplotlib patch."""
    from matplotlib.patches import Ellipse

    variances, axes = np.linalg.eigh(covariance)
    major = axes[:, 1]
    angle = np.degrees(np.arctan2(major[1], major[0]))
    width, height = 2 * n_std * np.sqrt(np.maximum(variances[::-1], 0.0))
    return Ellipse(mean, width, height, angle=angle, **kwargs)


class EVPIDisplay:
    """Expected value of perfect information over a 2-D feature space.

    Shows where an inspection is worth its cost: the EVPI of the belief a
    classifier holds at each point of the plane, for a
    :class:`~skrbal.DecisionProcess`, with the model drawn on top (class
    means and ``n_std``-sigma ellipses for Gaussian models; relevance
    vectors and the ``p = 0.5`` contour of every class for discriminative
    ones) and the contour where EVPI equals the inspection cost. It follows
    :class:`sklearn.inspection.DecisionBoundaryDisplay`: create it with
    :meth:`from_estimator`; all parameters are stored as attributes.

    Parameters
    ----------
    xx0 : ndarray of shape (grid_resolution, grid_resolution)
        First output of :func:`numpy.meshgrid`.
    xx1 : ndarray of shape (grid_resolution, grid_resolution)
        Second output of :func:`numpy.meshgrid`.
    evpi : ndarray of shape (grid_resolution, grid_resolution)
        EVPI at each grid point.
    proba : ndarray of shape (grid_resolution, grid_resolution, n_states), \
            default=None
        Beliefs at each grid point, columns in the process's state order.
    classes : ndarray of shape (n_states,), default=None
        Labels of the columns of ``proba``.
    inspection_cost : float, default=None
        Draws the contour ``EVPI = inspection_cost``, inside which the
        learner inspects.
    means : ndarray of shape (n_classes, 2), default=None
        Class means of a Gaussian model.
    covariances : ndarray of shape (n_classes, 2, 2), default=None
        Their covariance matrices.
    mean_classes : ndarray of shape (n_classes,), default=None
        Labels of ``means`` (a model's ``classes_``).
    relevance_vectors : ndarray of shape (n_relevance, 2), default=None
        Relevance vectors of a sparse kernel model.
    xlabel, ylabel : str, default=None
        Axis labels.

    Attributes
    ----------
    surface_ : matplotlib QuadContourSet or QuadMesh
        The EVPI surface.
    colorbar_ : matplotlib Colorbar or None
        Its colour bar.
    cost_contour_ : matplotlib QuadContourSet or None
        The contour ``EVPI = inspection_cost``.
    mean_markers_ : matplotlib Line2D or None
        The class means (``+``).
    ellipses_ : list of matplotlib Ellipse
        One per Gaussian class.
    relevance_markers_ : matplotlib Line2D or None
        The relevance vectors (``x``).
    proba_contours_ : dict
        Class label to the QuadContourSet of ``p(class | x) = 0.5``, for the
        classes whose belief crosses 0.5 on the grid.
    ax_ : matplotlib Axes
        Axes with the display.
    figure_ : matplotlib Figure
        Figure holding the axes.

    See Also
    --------
    sklearn.inspection.DecisionBoundaryDisplay : The classification analogue.
    skrbal.DecisionProcess.evpi : The EVPI of beliefs.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.mixture import BayesianGMMClassifier
    >>> from skrbal.plotting import EVPIDisplay
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([1, 2, 3, 4], 20)
    >>> centres = np.array([[-5, 0], [0, 0], [6, 0], [19, 0]])
    >>> X = rng.normal(size=(80, 2)) + centres[y - 1]
    >>> model = BayesianGMMClassifier().fit(X, y)
    >>> display = EVPIDisplay.from_estimator(
    ...     model, X, synthetic_decision_process(), grid_resolution=50
    ... )
    >>> display.evpi.shape, len(display.ellipses_)
    ((50, 50), 4)
    """

    def __init__(
        self,
        *,
        xx0,
        xx1,
        evpi,
        proba=None,
        classes=None,
        inspection_cost=None,
        means=None,
        covariances=None,
        mean_classes=None,
        relevance_vectors=None,
        xlabel=None,
        ylabel=None,
    ):
        self.xx0 = xx0
        self.xx1 = xx1
        self.evpi = evpi
        self.proba = proba
        self.classes = classes
        self.inspection_cost = inspection_cost
        self.means = means
        self.covariances = covariances
        self.mean_classes = mean_classes
        self.relevance_vectors = relevance_vectors
        self.xlabel = xlabel
        self.ylabel = ylabel

    def _class_colors(self):
        """A fixed colour per class label, shared by every overlay."""
        labels = self.classes if self.classes is not None else self.mean_classes
        labels = [] if labels is None else list(np.asarray(labels).tolist())
        return {label: f"C{k % 10}" for k, label in enumerate(labels)}

    def plot(
        self,
        *,
        ax=None,
        plot_method: str = "contourf",
        overlay: bool = True,
        proba_contours="auto",
        cost_contour: bool = True,
        colorbar: bool = True,
        n_std: float = 2.0,
        xlabel: str | None = None,
        ylabel: str | None = None,
        **kwargs,
    ) -> EVPIDisplay:
        """Draw the EVPI surface and the model.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.
        plot_method : {'contourf', 'pcolormesh'}, default='contourf'
            How to draw the surface.
        overlay : bool, default=True
            Draw the model: means (``+``) and ``n_std``-sigma ellipses, and
            relevance vectors (``x``), where the display has them.
        proba_contours : bool or 'auto', default='auto'
            Draw the ``p(class | x) = 0.5`` contour of each class; ``'auto'``
            draws them for models without Gaussian components (the paper's
            mRVM figures).
        cost_contour : bool, default=True
            Draw the contour ``EVPI = inspection_cost`` (dashed white).
        colorbar : bool, default=True
            Add a colour bar for EVPI.
        n_std : float, default=2.0
            Size of the ellipses in standard deviations.
        xlabel, ylabel : str, default=None
            Override the axis labels.
        **kwargs : dict
            Passed to ``plot_method`` (e.g. ``cmap``, ``levels``, ``alpha``).

        Returns
        -------
        display : EVPIDisplay
        """
        plt = _pyplot()
        if plot_method not in ("contourf", "pcolormesh"):
            raise ValueError(
                f"plot_method must be 'contourf' or 'pcolormesh', got {plot_method!r}."
            )
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4.5))
        kwargs.setdefault("cmap", "viridis")
        if plot_method == "contourf":
            kwargs.setdefault("levels", 20)
        else:
            kwargs.setdefault("shading", "auto")
        self.surface_ = getattr(ax, plot_method)(
            self.xx0, self.xx1, self.evpi, zorder=-1, **kwargs
        )
        self.colorbar_ = (
            ax.figure.colorbar(self.surface_, ax=ax, label="EVPI") if colorbar else None
        )
        self.cost_contour_ = None
        evpi_range = (np.min(self.evpi), np.max(self.evpi))
        if (
            cost_contour
            and self.inspection_cost is not None
            and evpi_range[0] < self.inspection_cost < evpi_range[1]
        ):
            self.cost_contour_ = ax.contour(
                self.xx0,
                self.xx1,
                self.evpi,
                levels=[self.inspection_cost],
                colors="white",
                linestyles="dashed",
                linewidths=1.0,
            )
        colors = self._class_colors()
        self._plot_gaussians(ax, overlay, n_std, colors)
        self._plot_relevance(ax, overlay)
        if proba_contours == "auto":
            proba_contours = self.means is None
        self._plot_proba_contours(ax, bool(proba_contours), colors)

        if xlabel is not None or not ax.get_xlabel():
            ax.set_xlabel(self.xlabel if xlabel is None else xlabel)
        if ylabel is not None or not ax.get_ylabel():
            ax.set_ylabel(self.ylabel if ylabel is None else ylabel)
        ax.set_xlim(self.xx0.min(), self.xx0.max())
        ax.set_ylim(self.xx1.min(), self.xx1.max())
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    def _plot_gaussians(self, ax, overlay, n_std, colors):
        self.mean_markers_, self.ellipses_ = None, []
        if not overlay or self.means is None:
            return
        means = np.asarray(self.means)
        labels = (
            np.arange(len(means))
            if self.mean_classes is None
            else np.asarray(self.mean_classes)
        )
        (self.mean_markers_,) = ax.plot(
            means[:, 0],
            means[:, 1],
            "+",
            color="white",
            markersize=12,
            markeredgewidth=2,
            linestyle="none",
            label="means",
        )
        for label, mean, covariance in zip(labels.tolist(), means, self.covariances):
            patch = _ellipse(
                mean,
                covariance,
                n_std,
                fill=False,
                edgecolor=colors.get(label, "white"),
                linewidth=1.5,
            )
            ax.add_patch(patch)
            self.ellipses_.append(patch)

    def _plot_relevance(self, ax, overlay):
        self.relevance_markers_ = None
        if not overlay or self.relevance_vectors is None:
            return
        vectors = np.asarray(self.relevance_vectors)
        (self.relevance_markers_,) = ax.plot(
            vectors[:, 0],
            vectors[:, 1],
            "x",
            color="white",
            markersize=9,
            markeredgewidth=2,
            linestyle="none",
            label="relevance vectors",
        )

    def _plot_proba_contours(self, ax, draw, colors):
        self.proba_contours_ = {}
        if not draw or self.proba is None:
            return
        labels = (
            np.arange(self.proba.shape[-1])
            if self.classes is None
            else np.asarray(self.classes)
        )
        for k, label in enumerate(labels.tolist()):
            surface = self.proba[..., k]
            # A class that never reaches 0.5 has no contour to draw (the
            # paper's untrained mRVM1 shows none).
            if not surface.min() < 0.5 < surface.max():
                continue
            self.proba_contours_[label] = ax.contour(
                self.xx0,
                self.xx1,
                surface,
                levels=[0.5],
                colors=[colors.get(label, "white")],
                linewidths=1.5,
            )

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        process: DecisionProcess,
        *,
        grid_resolution: int = 100,
        eps: float = 1.0,
        plot_method: str = "contourf",
        overlay: bool = True,
        proba_contours="auto",
        cost_contour: bool = True,
        colorbar: bool = True,
        n_std: float = 2.0,
        xlabel: str | None = None,
        ylabel: str | None = None,
        ax=None,
        **kwargs,
    ) -> EVPIDisplay:
        """Compute and draw the EVPI of a fitted classifier over a grid.

        Parameters
        ----------
        estimator : classifier
            Fitted, with ``predict_proba`` and ``classes_`` matching the
            process's states (any subset of them).
        X : array-like of shape (n_samples, 2)
            Data whose range, widened by ``eps``, the grid covers.
        process : DecisionProcess
            The decision whose EVPI is shown.
        grid_resolution : int, default=100
            Grid points along each axis.
        eps : float, default=1.0
            Margin added to the range of ``X``.
        plot_method : {'contourf', 'pcolormesh'}, default='contourf'
            How to draw the surface.
        overlay, proba_contours, cost_contour, colorbar, n_std
            As in :meth:`plot`.
        xlabel, ylabel : str, default=None
            Axis labels; a DataFrame's column names by default.
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.
        **kwargs : dict
            Passed to ``plot_method``.

        Returns
        -------
        display : EVPIDisplay

        Raises
        ------
        ValueError
            If ``X`` does not have exactly two features, ``grid_resolution``
            is below 2, ``eps`` is negative, or the model's classes are not
            states of the process.
        """
        check_is_fitted(estimator)
        if not hasattr(estimator, "predict_proba"):
            raise ValueError(
                f"{type(estimator).__name__} has no predict_proba: EVPI needs "
                "beliefs over the health states."
            )
        if not isinstance(process, DecisionProcess):
            raise TypeError(
                f"process must be a DecisionProcess, got {type(process).__name__}."
            )
        if int(grid_resolution) < 2:
            raise ValueError(
                f"grid_resolution must be at least 2, got {grid_resolution}."
            )
        if not eps >= 0:
            raise ValueError(f"eps must be non-negative, got {eps}.")
        n_features = _num_features(X)
        if n_features != 2:
            raise ValueError(
                f"EVPIDisplay needs a 2-D feature space; X has {n_features} "
                "features. Select two (e.g. X[:, [0, 1]]) and fit the model on them."
            )
        x0, x1 = (np.asarray(_safe_indexing(X, i, axis=1), float) for i in (0, 1))
        xx0, xx1 = np.meshgrid(
            np.linspace(x0.min() - eps, x0.max() + eps, int(grid_resolution)),
            np.linspace(x1.min() - eps, x1.max() + eps, int(grid_resolution)),
        )
        grid = np.c_[xx0.ravel(), xx1.ravel()]
        if hasattr(X, "columns"):
            import pandas as pd

            grid = pd.DataFrame(grid, columns=X.columns)
        proba = process.align_proba(
            estimator.predict_proba(grid), classes=estimator.classes_
        )
        evpi = process.evpi(proba).reshape(xx0.shape)

        gaussians = _gaussian_components(estimator)
        means, covariances = (None, None) if gaussians is None else gaussians
        relevance = getattr(estimator, "relevance_vectors_", None)
        if xlabel is None:
            xlabel = str(X.columns[0]) if hasattr(X, "columns") else "feature 1"
        if ylabel is None:
            ylabel = str(X.columns[1]) if hasattr(X, "columns") else "feature 2"
        display = cls(
            xx0=xx0,
            xx1=xx1,
            evpi=evpi,
            proba=proba.reshape(*xx0.shape, -1),
            classes=process.classes_,
            inspection_cost=float(process.inspection_cost),
            means=means,
            covariances=covariances,
            mean_classes=None if means is None else estimator.classes_,
            relevance_vectors=None if relevance is None else np.asarray(relevance),
            xlabel=xlabel,
            ylabel=ylabel,
        )
        return display.plot(
            ax=ax,
            plot_method=plot_method,
            overlay=overlay,
            proba_contours=proba_contours,
            cost_contour=cost_contour,
            colorbar=colorbar,
            n_std=n_std,
            **kwargs,
        )


def plot_model_evpi(
    estimator,
    X,
    y,
    process: DecisionProcess,
    *,
    labelled=None,
    ax=None,
    grid_resolution: int = 100,
    max_points: int | None = 3000,
    random_state=0,
    **kwargs,
) -> EVPIDisplay:
    """A model's EVPI surface with the data and its labelled set on top.

    The paper's single-run figure: the EVPI a classifier induces over the
    feature space, the model (see :class:`EVPIDisplay`), the observations
    coloured by class and the labelled ones circled, which shows where
    risk-based querying concentrated its inspections.

    Parameters
    ----------
    estimator : classifier
        Fitted classifier with ``predict_proba``.
    X : array-like of shape (n_samples, 2)
        Observations (e.g. a stream).
    y : array-like of shape (n_samples,)
        Their classes, for the colours.
    process : DecisionProcess
        The decision whose EVPI is shown.
    labelled : array-like of int, default=None
        Indices into ``X`` of the labelled observations, circled.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when ``None``.
    grid_resolution : int, default=100
        Grid points along each axis.
    max_points : int or None, default=3000
        Show at most this many unlabelled observations (a random subset;
        every labelled one is shown); ``None`` shows all.
    random_state : int, RandomState instance or None, default=0
        Draws that subset.
    **kwargs : dict
        Passed to :meth:`EVPIDisplay.from_estimator`.

    Returns
    -------
    display : EVPIDisplay
        The display; ``display.ax_`` holds the scatter too.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal.plotting import plot_model_evpi
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([1, 2, 3, 4], 25)
    >>> centres = np.array([[-5, 0], [0, 0], [6, 0], [19, 0]])
    >>> X = rng.normal(size=(100, 2)) + centres[y - 1]
    >>> model = GaussianNB().fit(X[::5], y[::5])
    >>> display = plot_model_evpi(model, X, y, synthetic_decision_process(),
    ...                           labelled=np.arange(0, 100, 5), grid_resolution=40)
    >>> len(display.ellipses_), len(display.ax_.collections[-1].get_offsets())
    (4, 20)
    """
    from sklearn.utils import check_random_state

    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}.")
    display = EVPIDisplay.from_estimator(
        estimator, X, process, grid_resolution=grid_resolution, ax=ax, **kwargs
    )
    ax = display.ax_
    labelled = np.zeros(0, dtype=int) if labelled is None else np.asarray(labelled)
    shown = np.setdiff1d(np.arange(X.shape[0]), labelled)
    if max_points is not None and shown.size > max_points:
        rng = check_random_state(random_state)
        shown = np.sort(rng.choice(shown, size=max_points, replace=False))
    colors = display._class_colors()
    for label in np.unique(y).tolist():
        rows = shown[y[shown] == label]
        ax.scatter(
            X[rows, 0],
            X[rows, 1],
            s=4,
            color=colors.get(label, "grey"),
            alpha=0.6,
            linewidths=0,
            label=f"class {label}",
        )
    if labelled.size:
        ax.scatter(
            X[labelled, 0],
            X[labelled, 1],
            s=60,
            facecolors="none",
            edgecolors="black",
            linewidths=1.2,
            label=f"labelled ({labelled.size})",
        )
    return display
