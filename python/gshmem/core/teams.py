"""Team management: team_split_strided, team_split_2d, team_translate_pe, team_destroy (nvshmem4py's names)."""
from gshmem import _gshmem
from gshmem.core.types import PREDEFINED_TEAMS, GshmemInvalid, Teams, require_init

_PREDEFINED_HANDLES = frozenset(int(Teams[name]) for name in PREDEFINED_TEAMS)

__all__ = ["TeamConfig", "team_split_strided", "team_split_2d", "team_translate_pe", "team_destroy"]


class TeamConfig:
    """nvshmem_team_config_t's fields. gshmem teams have no communication contexts, so a config (or None) is
    accepted and num_contexts is not used."""

    __slots__ = ("version", "num_contexts")

    def __init__(self, num_contexts=0):
        self.version = 0
        self.num_contexts = num_contexts


def _team_arg(team, call, what="parent_team"):
    require_init(call)
    if isinstance(team, str):
        team = Teams[team]
    if not isinstance(team, int) or _gshmem.team_n_pes(int(team)) <= 0:
        raise GshmemInvalid(f"{call}: {what}={team!r} is not a team this PE is in. Fix: pass a Teams value or a "
                            "team a split returned on this PE")
    return int(team)


def _register(handle, name):
    if handle < 0:
        return None  # this PE is not a member (as nvshmem4py: None, not an error)
    Teams.add(name, handle)
    return Teams[name]


def team_split_strided(parent_team, start, stride, size, config=None, config_mask=0, new_team_name=None):
    """Every member of parent_team calls: the new team is parent members start, start + stride, ... (size of them).
    Returns the new team (registered in Teams as new_team_name, default TEAM_<handle>), or None on a PE that is
    not in it."""
    parent = _team_arg(parent_team, "team_split_strided")
    handle = _gshmem.team_split_strided(parent, int(start), int(stride), int(size))
    return _register(handle, new_team_name or f"TEAM_{handle}")


def team_split_2d(parent_team, xrange, xaxis_config=None, xaxis_mask=0, yaxis_config=None, yaxis_mask=0,
                  new_team_name=None):
    """Every member of parent_team calls: the parent as a grid xrange wide; returns (this PE's row team, its column
    team), each None where this PE is not in one."""
    parent = _team_arg(parent_team, "team_split_2d")
    if int(xrange) < 1:
        raise GshmemInvalid(f"team_split_2d: xrange={xrange} must be at least 1")
    x, y = _gshmem.team_split_2d(parent, int(xrange))
    xname = f"{new_team_name}_X" if new_team_name else f"TEAM_X_{x}"
    yname = f"{new_team_name}_Y" if new_team_name else f"TEAM_Y_{y}"
    return _register(x, xname), _register(y, yname)


def team_translate_pe(src_team, src_pe, dest_team):
    """The index in dest_team of src_team's member src_pe, or -1 where it is not a member of dest_team."""
    src = _team_arg(src_team, "team_translate_pe", "src_team")
    n = _gshmem.team_n_pes(src)
    if not 0 <= int(src_pe) < n:
        raise GshmemInvalid(f"team_translate_pe: src_pe={src_pe} is out of range for src_team (0..{n - 1})")
    dest = int(Teams[dest_team]) if isinstance(dest_team, str) else int(dest_team)
    return _gshmem.team_translate_pe(src, int(src_pe), dest)


def team_destroy(team):
    """Every member calls: destroys a team a split made (by handle or name) and removes it from Teams."""
    require_init("team_destroy")
    t = Teams[team] if isinstance(team, str) else team
    if int(t) in _PREDEFINED_HANDLES:
        raise GshmemInvalid(f"team_destroy: {t!r} is a predefined team, which cannot be destroyed")
    _gshmem.team_destroy(int(t))
    Teams.remove_by_value(int(t))
