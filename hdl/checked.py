"""Components that check their arguments before they exist."""

from amaranth.lib import wiring


class CheckedComponent(wiring.Component):
    """A :class:`wiring.Component` whose class method :meth:`check` sees the constructor's
    arguments first, in ``__new__``: a rejected component is never created, so no "created
    but never used" warning follows its exception.

    Subclasses override :meth:`check`: it raises ``TypeError``/``ValueError`` for arguments
    the component cannot take, and returns what it derived from them (or None), which
    ``__init__`` finds as ``self.checked``.
    """

    @classmethod
    def check(cls, *args, **kwargs):
        """Raise ``TypeError`` or ``ValueError`` for arguments the component cannot take;
        return what ``__init__`` needs of the checks (or None)."""

    def __new__(cls, *args, **kwargs):
        checked = cls.check(*args, **kwargs)
        # The warning's source location is the caller's, one frame further out.
        self = super().__new__(cls, src_loc_at=1)
        self.checked = checked
        return self
