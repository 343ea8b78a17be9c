"""EVPI over a two-dimensional feature space, with the model drawn on top."""

from __future__ import annotations

import numpy as np
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _num_features, check_is_fitted

from skrbal._decision import DecisionProcess
from skrbal.plotting._base import _new_axes, plain_text
from skrbal.plotting._states import state_styles

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


def _checked_data(y, labelled, n_samples: int, styles: dict):
    """``y`` and ``labelled`` as arrays, checked against ``X`` and the states."""
    if y is not None:
        y = np.asarray(y)
        if y.shape != (n_samples,):
            raise ValueError(f"y must have shape ({n_samples},), got {y.shape}.")
        unknown = sorted(set(np.unique(y).tolist()) - set(styles), key=str)
        if unknown:
            raise ValueError(
                f"y has labels {unknown} that are not states of the process "
                f"{list(styles)}."
            )
    if labelled is not None:
        labelled = np.asarray(labelled)
        if labelled.size and (
            labelled.ndim != 1
            or not np.issubdtype(labelled.dtype, np.integer)
            or labelled.min() < 0
            or labelled.max() >= n_samples
        ):
            raise ValueError(
                f"labelled must be indices into X's {n_samples} rows, got {labelled!r}."
            )
        labelled = labelled.astype(int)
    return y, labelled


class EVPIDisplay:
    """Expected value of perfect information over a 2-D feature space.

    Shows where an inspection is worth its cost: the EVPI of the belief a
    classifier holds at each point of the plane, for a
    :class:`~skrbal.DecisionProcess`, with the model drawn on top (class
    means and ``n_std``-sigma ellipses for Gaussian models; relevance
    vectors and the ``p = 0.5`` contour of every class for discriminative
    ones), the contour where EVPI equals the inspection cost and, when given,
    the observations in their state's colour with the labelled ones circled
    (the paper's single-run figure). Every state keeps the colour and name
    :func:`state_styles` gives it. It follows
    :class:`sklearn.inspection.DecisionBoundaryDisplay`: create it with
    :meth:`from_estimator`; all parameters are stored as attributes. Panels
    that are compared share one colour scale through ``vmin`` and ``vmax``
    (or :meth:`rescale` once they are drawn).

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
    X : ndarray of shape (n_samples, 2), default=None
        Observations drawn on top, coloured by ``y``.
    y : ndarray of shape (n_samples,), default=None
        Their states.
    labelled : ndarray of int, default=None
        Indices into ``X`` of the labelled observations, circled.
    state_styles : dict, default=None
        State label to :class:`StateStyle`; by default
        ``state_styles(classes)``.
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
        One per Gaussian class, in its state's colour.
    relevance_markers_ : matplotlib Line2D or None
        The relevance vectors (``x``).
    proba_contours_ : dict
        State label to the QuadContourSet of ``p(state | x) = 0.5``, for the
        states whose belief crosses 0.5 on the grid.
    data_scatters_ : dict
        State label to the PathCollection of its (unlabelled) observations.
    labelled_scatter_ : matplotlib PathCollection or None
        The circles around the labelled observations.
    ax_ : matplotlib Axes
        Axes with the display.
    figure_ : matplotlib Figure
        Figure holding the axes.

    See Also
    --------
    sklearn.inspection.DecisionBoundaryDisplay : The classification analogue.
    skrbal.DecisionProcess.evpi : The EVPI of beliefs.
    state_styles : The colour and name of each state.

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
    >>> model = BayesianGMMClassifier().fit(X[::4], y[::4])
    >>> display = EVPIDisplay.from_estimator(
    ...     model, X, synthetic_decision_process(), y=y,
    ...     labelled=np.arange(0, 80, 4), grid_resolution=50, vmin=0, vmax=20
    ... )
    >>> display.evpi.shape, len(display.ellipses_)
    ((50, 50), 4)
    >>> display.data_scatters_[4].get_label(), display.surface_.norm.vmax
    ('failure', 20.0)
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
        X=None,
        y=None,
        labelled=None,
        state_styles=None,
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
        self.X = X
        self.y = y
        self.labelled = labelled
        self.state_styles = state_styles
        self.xlabel = xlabel
        self.ylabel = ylabel

    def _styles(self) -> dict:
        """The display's state styles, shared by every overlay."""
        if self.state_styles is not None:
            return self.state_styles
        labels = self.classes if self.classes is not None else self.mean_classes
        return state_styles([] if labels is None else labels)

    def _color(self, styles, label, default="white"):
        style = styles.get(label)
        return default if style is None else style.color

    def plot(
        self,
        ax=None,
        *,
        plot_method: str = "contourf",
        overlay: bool = True,
        proba_contours="auto",
        cost_contour: bool = True,
        colorbar: bool = True,
        n_std: float = 2.0,
        vmin: float | None = None,
        vmax: float | None = None,
        max_points: int | None = 3000,
        random_state=0,
        xlabel: str | None = None,
        ylabel: str | None = None,
        **kwargs,
    ) -> EVPIDisplay:
        """Draw the EVPI surface, the model and the data.

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
            Draw the ``p(state | x) = 0.5`` contour of each state; ``'auto'``
            draws them for models without Gaussian components (the paper's
            mRVM figures).
        cost_contour : bool, default=True
            Draw the contour ``EVPI = inspection_cost`` (dashed white).
        colorbar : bool, default=True
            Add a colour bar for EVPI.
        n_std : float, default=2.0
            Size of the ellipses in standard deviations.
        vmin, vmax : float, default=None
            Ends of the colour scale; the surface's own range by default.
            Give panels that are compared the same ones. With
            ``'contourf'`` an integer ``levels`` places about that many round
            levels between them, and EVPI beyond them takes the end colours.
        max_points : int or None, default=3000
            Draw at most this many unlabelled observations (a random subset;
            every labelled one is drawn); ``None`` draws all.
        random_state : int, RandomState instance or None, default=0
            Draws that subset.
        xlabel, ylabel : str, default=None
            Override the axis labels.
        **kwargs : dict
            Passed to ``plot_method`` (e.g. ``cmap``, ``levels``, ``alpha``).

        Returns
        -------
        display : EVPIDisplay
        """
        if plot_method not in ("contourf", "pcolormesh"):
            raise ValueError(
                f"plot_method must be 'contourf' or 'pcolormesh', got {plot_method!r}."
            )
        ax = _new_axes(ax, (6, 4.5))
        self.ax_, self.figure_ = ax, ax.figure
        self._surface_options = dict(kwargs, plot_method=plot_method)
        self.colorbar_ = None
        self._plot_surface(vmin, vmax, colorbar)
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
        styles = self._styles()
        self._plot_gaussians(ax, overlay, n_std, styles)
        self._plot_relevance(ax, overlay)
        if proba_contours == "auto":
            proba_contours = self.means is None
        self._plot_proba_contours(ax, bool(proba_contours), styles)
        self._plot_data(ax, styles, max_points, random_state)

        if xlabel is not None or not ax.get_xlabel():
            ax.set_xlabel(self.xlabel if xlabel is None else xlabel)
        if ylabel is not None or not ax.get_ylabel():
            ax.set_ylabel(self.ylabel if ylabel is None else ylabel)
        ax.set_xlim(self.xx0.min(), self.xx0.max())
        ax.set_ylim(self.xx1.min(), self.xx1.max())
        return self

    def _plot_surface(self, vmin, vmax, colorbar: bool) -> None:
        options = dict(self._surface_options)
        plot_method = options.pop("plot_method")
        options.setdefault("cmap", "viridis")
        low = float(np.min(self.evpi)) if vmin is None else float(vmin)
        high = float(np.max(self.evpi)) if vmax is None else float(vmax)
        if vmin is not None and vmax is not None and not low < high:
            raise ValueError(f"vmin must be below vmax, got {vmin} and {vmax}.")
        if not low < high:  # a flat surface (one certain belief) still has a scale
            high = low + 1.0
        if plot_method == "contourf":
            levels = options.pop("levels", 20)
            if np.ndim(levels) == 0:
                # Round levels (as contourf picks them) over the scale, not
                # the data: panels with one scale get the same levels.
                from matplotlib.ticker import MaxNLocator

                levels = MaxNLocator(int(levels) + 1).tick_values(low, high)
            below = bool(np.min(self.evpi) < levels[0])
            above = bool(np.max(self.evpi) > levels[-1])
            # EVPI beyond the scale takes the end colours rather than a hole.
            options.setdefault(
                "extend", ("neither", "max", "min", "both")[2 * below + above]
            )
            options.setdefault("vmin", low)
            options.setdefault("vmax", high)
            self.surface_ = self.ax_.contourf(
                self.xx0, self.xx1, self.evpi, levels=levels, zorder=-1, **options
            )
        else:
            options.setdefault("shading", "auto")
            options.setdefault("vmin", low)
            options.setdefault("vmax", high)
            self.surface_ = self.ax_.pcolormesh(
                self.xx0, self.xx1, self.evpi, zorder=-1, **options
            )
        if colorbar:
            self.colorbar_ = self.figure_.colorbar(
                self.surface_, ax=self.ax_, label="EVPI"
            )

    def rescale(self, vmin: float | None = None, vmax: float | None = None):
        """Redraw the surface on another colour scale, keeping the rest.

        For panels drawn one by one and then compared: once all are drawn,
        give each the smallest ``vmin`` and largest ``vmax`` of them all.

        Parameters
        ----------
        vmin, vmax : float, default=None
            Ends of the colour scale; the surface's own range by default.

        Returns
        -------
        display : EVPIDisplay

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import numpy as np
        >>> from skrbal.plotting import EVPIDisplay
        >>> xx0, xx1 = np.meshgrid(np.arange(3.0), np.arange(3.0))
        >>> panels = [EVPIDisplay(xx0=xx0, xx1=xx1, evpi=k * xx0).plot()
        ...           for k in (1, 5)]
        >>> top = max(panel.evpi.max() for panel in panels)
        >>> [panel.rescale(0, top).surface_.norm.vmax for panel in panels]
        [10.0, 10.0]
        """
        had_colorbar = self.colorbar_ is not None
        if had_colorbar:
            self.colorbar_.remove()
            self.colorbar_ = None
        self.surface_.remove()
        self._plot_surface(vmin, vmax, had_colorbar)
        return self

    def _plot_gaussians(self, ax, overlay, n_std, styles):
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
                edgecolor=self._color(styles, label),
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

    def _plot_proba_contours(self, ax, draw, styles):
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
                colors=[self._color(styles, label)],
                linewidths=1.5,
            )

    def _plot_data(self, ax, styles, max_points, random_state):
        self.data_scatters_, self.labelled_scatter_ = {}, None
        if self.X is None:
            return
        from sklearn.utils import check_random_state

        X = np.asarray(self.X, dtype=float)
        labelled = (
            np.zeros(0, dtype=int)
            if self.labelled is None
            else np.asarray(self.labelled, dtype=int)
        )
        shown = np.setdiff1d(np.arange(X.shape[0]), labelled)
        if max_points is not None and shown.size > max_points:
            rng = check_random_state(random_state)
            shown = np.sort(rng.choice(shown, size=max_points, replace=False))
        if self.y is not None:
            y = np.asarray(self.y)
            for label, style in styles.items():
                rows = shown[y[shown] == label]
                if rows.size:
                    self.data_scatters_[label] = ax.scatter(
                        X[rows, 0],
                        X[rows, 1],
                        s=4,
                        color=style.color,
                        alpha=0.6,
                        linewidths=0,
                        label=plain_text(style.name),
                    )
        if labelled.size:
            self.labelled_scatter_ = ax.scatter(
                X[labelled, 0],
                X[labelled, 1],
                s=60,
                facecolors="none",
                edgecolors="black",
                linewidths=1.2,
                label=f"labelled ({labelled.size})",
            )

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        process: DecisionProcess,
        *,
        y=None,
        labelled=None,
        state_names=None,
        grid_resolution: int = 100,
        eps: float = 1.0,
        plot_method: str = "contourf",
        overlay: bool = True,
        proba_contours="auto",
        cost_contour: bool = True,
        colorbar: bool = True,
        n_std: float = 2.0,
        vmin: float | None = None,
        vmax: float | None = None,
        max_points: int | None = 3000,
        random_state=0,
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
            Data whose range, widened by ``eps``, the grid covers; drawn on
            top when ``y`` or ``labelled`` is given.
        process : DecisionProcess
            The decision whose EVPI is shown; its states give the colours
            and names (see :func:`state_styles`).
        y : array-like of shape (n_samples,), default=None
            States of the observations: draws them, each in its state's
            colour.
        labelled : array-like of int, default=None
            Indices into ``X`` of the labelled observations: circles them.
        state_names : sequence of str, default=None
            Names of the states, overriding the process's.
        grid_resolution : int, default=100
            Grid points along each axis.
        eps : float, default=1.0
            Margin added to the range of ``X``.
        plot_method : {'contourf', 'pcolormesh'}, default='contourf'
            How to draw the surface.
        overlay, proba_contours, cost_contour, colorbar, n_std
            As in :meth:`plot`.
        vmin, vmax, max_points, random_state
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
            is below 2, ``eps`` is negative, the model's classes or ``y``'s
            labels are not states of the process, ``y`` has another length
            than ``X``, or ``labelled`` indexes outside ``X``.
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
        styles = state_styles(process, names=state_names)
        y, labelled = _checked_data(y, labelled, x0.size, styles)
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
            X=np.c_[x0, x1] if y is not None or labelled is not None else None,
            y=y,
            labelled=labelled,
            state_styles=styles,
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
            vmin=vmin,
            vmax=vmax,
            max_points=max_points,
            random_state=random_state,
            **kwargs,
        )
