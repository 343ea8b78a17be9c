"""Imperfect inspections: the expected value of sample information.

An :class:`InspectionMethod` has a cost and a confusion model ``P(z | y)`` of
its reports. :func:`evsi` values each method's report for a decision
process (pre-posterior analysis), :func:`choose_inspection` picks the method
worth the most net of its cost, and :func:`report_posterior` updates a belief
with a report. :func:`learnable_posterior` is the part of it a model learns.
:func:`simulate_reports` draws reports from a method's
confusion model (the simulated oracle) and :func:`weighted_copies` turns a
posterior into training rows for an estimator with ``sample_weight``.
"""

from skrbal.exceptions import ImpossibleReportError
from skrbal.inspection._method import InspectionMethod, perfect_inspection
from skrbal.inspection._reports import (
    learnable_posterior,
    simulate_reports,
    weighted_copies,
)
from skrbal.inspection._value import (
    check_methods,
    choose_inspection,
    evsi,
    follow_up_cost,
    report_posterior,
)

__all__ = [
    "ImpossibleReportError",
    "InspectionMethod",
    "check_methods",
    "choose_inspection",
    "evsi",
    "follow_up_cost",
    "learnable_posterior",
    "perfect_inspection",
    "report_posterior",
    "simulate_reports",
    "weighted_copies",
]
