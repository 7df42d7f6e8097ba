"""Teams, exceptions and state shared by gshmem.core's modules."""
from gshmem import _gshmem

__all__ = ["Teams", "NvshmemError", "NvshmemInvalid", "GshmemError", "GshmemInvalid"]

# gshmem's own errors come from the library with its message (the call, the cause and the fix) and .status.
GshmemError = _gshmem.GshmemError


class GshmemInvalid(GshmemError, ValueError):
    """A bad argument caught in Python before the library was called (the message names the call)."""

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg
        self.status = 1  # GSHMEM_ERROR_INVALID_VALUE


# nvshmem4py's names, so `except nvshmem.NvshmemError` keeps working after changing the import.
NvshmemError = GshmemError
NvshmemInvalid = GshmemInvalid


class Team(int):
    """A team handle (an int, so it passes wherever a team does) with the name it is registered under in Teams."""

    def __new__(cls, value, name):
        t = super().__new__(cls, value)
        t.name = name
        return t

    def __repr__(self):
        return f"<Teams.{self.name}: {int(self)}>"


class _TeamsMeta(type):
    def __getitem__(cls, name):
        try:
            return cls._teams[name]
        except KeyError:
            raise KeyError(f"Teams: no team named {name!r} (registered: {', '.join(cls._teams)})") from None

    def __getattr__(cls, name):
        teams = cls.__dict__["_teams"]
        if name in teams:
            return teams[name]
        raise AttributeError(f"Teams has no team {name!r}")

    def __iter__(cls):
        return iter(list(cls._teams.values()))

    def __contains__(cls, item):
        return item in cls._teams or any(int(t) == item for t in cls._teams.values())


class Teams(metaclass=_TeamsMeta):
    """The teams by name, as nvshmem4py's Teams: the predefined ones (TEAM_WORLD, TEAM_SHARED, TEAM_NODE,
    TEAM_SAME_MYPE_NODE and their *_INDEX aliases, TEAM_INVALID) and those team_split_* added (add / remove /
    remove_by_value). Members are ints (Team), so they pass wherever a team handle does."""

    _teams = {}

    @classmethod
    def add(cls, name, value):
        cls._teams[name] = Team(value, name)

    @classmethod
    def remove(cls, name):
        del cls._teams[name]

    @classmethod
    def remove_by_value(cls, value):
        for name in [n for n, t in cls._teams.items() if int(t) == int(value)]:
            del cls._teams[name]


for _name, _value in (("TEAM_INVALID", -1), ("TEAM_WORLD", 0), ("TEAM_WORLD_INDEX", 0), ("TEAM_SHARED", 1),
                      ("TEAM_SHARED_INDEX", 1), ("TEAM_NODE", 2), ("TEAM_NODE_INDEX", 2),
                      ("TEAM_SAME_MYPE_NODE", 3), ("TEAM_SAME_MYPE_NODE_INDEX", 3)):
    Teams.add(_name, _value)
PREDEFINED_TEAMS = frozenset(Teams._teams)


class _State:
    initialized = False
    cpu_pes = True
    n_pes = 0
    device = (1, 0)  # (DLPack device type, id) of the symmetric heap: (1, 0) CPU PEs, (2, ordinal) GPU PEs


state = _State()


def require_init(call):
    if not state.initialized:
        raise GshmemInvalid(f"{call}: gshmem is not initialized. Fix: call gshmem.core.init() first")


def require_no_stream(stream, call):
    """CPU PEs run the blocking host forms: a stream is accepted only as None there."""
    if stream is not None:
        raise GshmemInvalid(
            f"{call}: stream={stream!r} but this PE is a CPU PE (no GPU, or GSHMEM_DEVICE=cpu), where calls are "
            "blocking host calls. Fix: pass stream=None (or leave it out)")
