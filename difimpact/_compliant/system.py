"""The compliant contact phase as a hybrid system of the phase engine."""

import equinox as eqx
import jax.numpy as jnp

from .._contact import Contact
from .._custom_types import Array, Config, Float
from .._hybrid import AbstractHybridSystem
from .._models import AbstractPlanarModel
from .dynamics import evaluate, normal_force_rates
from .events import ContactEvent, event_components
from .regimes import switch
from .state import ContactModes, MS


class StepRecord(eqx.Module):
    """Per contact at an accepted step: ``F_n`` [N] and ``dF_n/dt`` [N/s] (the peak force), and with the
    history also ``F_t`` [N], ``v_n, v_t`` [m/s] (else ``None``)."""

    normal_force: Float[Array, " k"]
    normal_force_rate: Float[Array, " k"]
    tangential_force: Float[Array, " k"] | None
    normal_velocity: Float[Array, " k"] | None
    tangential_velocity: Float[Array, " k"] | None


class CompliantContactSystem(AbstractHybridSystem):
    """A model with compliant ground contacts, integrated from ``q0`` in the flat state of
    :class:`~difimpact._compliant.state.PhaseState`, with the regimes :class:`ContactModes`, ended by the
    first contact's end of compression (``end="compression"``) or separation (``end="separation"``); its
    records are a :class:`StepRecord`, the whole of it with ``history``."""

    model: AbstractPlanarModel
    contacts: tuple[Contact, ...]
    q0: Config
    end: str = eqx.field(static=True)
    history: bool = eqx.field(static=True)

    def vector_field(self, t, y, mode: ContactModes):
        e = evaluate(self.model, self.contacts, self.q0, y, mode)
        return jnp.concatenate([e.qdot, e.qddot * MS, e.F_n * MS, e.F_t * MS, e.F_n * e.v_n * MS,
                                e.F_t * e.v_t * MS, e.z_dot])

    def event_components(self, t, y, mode: ContactModes):
        return event_components(self.contacts, evaluate(self.model, self.contacts, self.q0, y, mode), mode,
                                self.end)

    def transition(self, t, y, mode: ContactModes, event):
        y, mode = switch(self.model, self.contacts, self.q0, t, y, mode, event)
        row, first = event // len(self.contacts), event % len(self.contacts) == 0
        finished = (row == ContactEvent.END) | ((self.end == "separation") & (row == ContactEvent.SEPARATION) & first)
        return y, mode, finished

    def record(self, t, y, mode: ContactModes) -> StepRecord:
        e = evaluate(self.model, self.contacts, self.q0, y, mode)
        rate = normal_force_rates(self.contacts, e)
        if not self.history:
            return StepRecord(e.F_n, rate, None, None, None)
        return StepRecord(e.F_n, rate, e.F_t, e.v_n, e.v_t)
