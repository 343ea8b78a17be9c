"""Repeated risk-based active-learning studies: case studies, methods, runner."""

from skrbal.exceptions import StudyFileWarning
from skrbal.experiments._cases import CaseStudy, campaign_case, get_case_study
from skrbal.experiments._folder import load_study
from skrbal.experiments._methods import Method, available_methods, get_method
from skrbal.experiments._report import study_report, summarise_study
from skrbal.experiments._runner import (
    repetition_seed,
    replay_repetition,
    run_repetition,
    run_study,
)

__all__ = [
    "CaseStudy",
    "Method",
    "StudyFileWarning",
    "available_methods",
    "campaign_case",
    "get_case_study",
    "get_method",
    "load_study",
    "repetition_seed",
    "replay_repetition",
    "run_repetition",
    "run_study",
    "study_report",
    "summarise_study",
]
