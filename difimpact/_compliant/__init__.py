"""The compliant contact phase: contact forces in finite time, integrated in phases by the hybrid engine."""

from .solve import (
    compliant_impact as compliant_impact,
    CompliantResult as CompliantResult,
    CompliantResults as CompliantResults,
    History as History,
)
from .fixtures import seed000_tip_contact as seed000_tip_contact
