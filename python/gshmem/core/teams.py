"""Team management: team_split_strided, team_split_2d, team_init, team_translate_pe, team_destroy (nvshmem4py's
names)."""
from gshmem import _gshmem
from gshmem.core.types import PREDEFINED_TEAMS, GshmemInvalid, Teams, require_init

_PREDEFINED_HANDLES = frozenset(int(Teams[name]) for name in PREDEFINED_TEAMS)

__all__ = ["TeamConfig", "TeamUniqueId", "get_team_unique_id", "team_split_strided", "team_split_2d", "team_init",
           "team_translate_pe", "team_destroy", "team_get_config"]

_CONFIG_MASK_ALL = 0x1 | 0x2  # NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS | _UNIQUEID


class TeamConfig:
    """nvshmem_team_config_t's fields (version, num_contexts, uniqueid), set as attributes as nvshmem4py's programs
    do. gshmem teams have no communication contexts: num_contexts is accepted and not used, and the splits take a
    config or None; team_init needs one, whose uniqueid (a TeamUniqueId or its value) its members meet by."""

    __slots__ = ("version", "num_contexts", "uniqueid")

    def __init__(self, num_contexts=0):
        self.version = 0
        self.num_contexts = num_contexts
        self.uniqueid = 0


class TeamUniqueId:
    """nvshmem4py's team unique id (.value): what team_init's PEs share through TeamConfig.uniqueid."""

    __slots__ = ("value",)

    def __init__(self, value=0):
        self.value = int(value)

    def __repr__(self):
        return f"<TeamUniqueId 0x{self.value:x}>"


def get_team_unique_id():
    """A new TeamUniqueId (gshmemx_team_get_uniqueid: random 64 bits, never 0 or all ones). One member gets it and
    sends it to the others (torch.distributed.broadcast_object_list, MPI, ...); each puts it in
    TeamConfig.uniqueid (the object or its .value) for team_init."""
    return TeamUniqueId(_gshmem.team_uniqueid())


def _check_mask(mask, call, what="config_mask"):
    if not isinstance(mask, int) or mask < 0 or mask & ~_CONFIG_MASK_ALL:
        raise GshmemInvalid(f"{call}: {what}={mask!r}; valid: 0 or NVSHMEM_TEAM_CONFIG_MASK_* bits (1, 2)")


def _team_arg(team, call, what="parent_team"):
    require_init(call)
    if isinstance(team, str):
        team = Teams[team]
    if not isinstance(team, int) or _gshmem.team_n_pes(int(team)) <= 0:
        why = ""
        if isinstance(team, int) and int(team) in (4, 5):  # TEAM_SAME_GPU, TEAM_GPU_LEADERS
            why = " (TEAM_GPU_LEADERS holds only the lowest PE of each GPU)"
        raise GshmemInvalid(f"{call}: {what}={team!r} is not a team this PE is in{why}. Fix: pass a Teams value or "
                            "a team a split returned on this PE")
    return int(team)


def _free_names(call, *names):
    """Names given by the program must not be registered yet (nvshmem4py's Teams.add raises ValueError after the
    team was made; checked here before the collective, so no team is left behind)."""
    for name in names:
        if name in Teams:
            raise GshmemInvalid(f"{call}: new_team_name {name!r} is already registered in Teams (handle "
                                f"{int(Teams[name])}). Fix: pick another name, or team_destroy that team first")


def _register(handle, name, given):
    if handle < 0:
        return None  # this PE is not a member (as nvshmem4py: None, not an error)
    if given:
        Teams.add(name, handle)
    else:
        Teams._set(name, handle)  # TEAM_<handle>: any older entry of that name was a team now gone
    return Teams[name]


def team_split_strided(parent_team, start, stride, size, config=None, config_mask=0, new_team_name=None):
    """Every member of parent_team calls: the new team is parent members start, start + stride, ... (size of them).
    Returns the new team (registered in Teams as new_team_name, default TEAM_<handle>), or None on a PE that is
    not in it."""
    call = "team_split_strided"
    parent = _team_arg(parent_team, call)
    # Checked before the collective, as nvshmem4py does, so every PE raises the same way.
    n = _gshmem.team_n_pes(parent)
    if int(size) <= 0 or int(stride) < 1 or int(start) < 0 or int(start) + (int(size) - 1) * int(stride) >= n:
        raise GshmemInvalid(f"{call}: start={start}, stride={stride}, size={size} do not name members of the parent "
                            f"team (0..{n - 1}): size > 0, stride >= 1, start >= 0 and the last member in range")
    _check_mask(config_mask, call)
    if new_team_name:
        _free_names(call, new_team_name)
    handle = _gshmem.team_split_strided(parent, int(start), int(stride), int(size))
    return _register(handle, new_team_name or f"TEAM_{handle}", bool(new_team_name))


def team_split_2d(parent_team, xrange, xaxis_config=None, xaxis_mask=0, yaxis_config=None, yaxis_mask=0,
                  new_team_name=None):
    """Every member of parent_team calls: the parent as a grid xrange wide; returns (this PE's row team, its column
    team), each None where this PE is not in one."""
    parent = _team_arg(parent_team, "team_split_2d")
    if int(xrange) < 1:
        raise GshmemInvalid(f"team_split_2d: xrange={xrange} must be at least 1")
    _check_mask(xaxis_mask, "team_split_2d", "xaxis_mask")
    _check_mask(yaxis_mask, "team_split_2d", "yaxis_mask")
    if new_team_name:
        _free_names("team_split_2d", f"{new_team_name}_X", f"{new_team_name}_Y")
    x, y = _gshmem.team_split_2d(parent, int(xrange))
    xname = f"{new_team_name}_X" if new_team_name else f"TEAM_X_{x}"
    yname = f"{new_team_name}_Y" if new_team_name else f"TEAM_Y_{y}"
    given = bool(new_team_name)
    return _register(x, xname, given), _register(y, yname, given)


def team_init(team_config, config_mask, npes, pe_idx_in_team, new_team_name=None):
    """nvshmem4py's team_init: only the PEs of the new team call, each with a config whose uniqueid (a TeamUniqueId
    or its .value) one member got from get_team_unique_id and sent to the others, the team's size and its own
    index; config_mask is checked but, as in users' code that passes 0, not needed for the uniqueid. Any set of PEs
    in any order is a team (one not evenly spaced in increasing order is held as a member list). Without a uniqueid only the team of every PE in world order can be made (npes = n_pes(), pe_idx_in_team
    = my_pe(), every PE calling), what nvshmem4py's tests do."""
    call = "team_init"
    require_init(call)
    _check_mask(config_mask, call)
    if new_team_name:
        _free_names(call, new_team_name)
    if team_config is None:
        raise GshmemInvalid(f"{call}: team_config is None: the members find each other by team_config.uniqueid. "
                            "Fix: pass a TeamConfig whose uniqueid one member got from get_team_unique_id()")
    uid = getattr(team_config, "uniqueid", 0)
    uid = int(uid.value if isinstance(uid, TeamUniqueId) else (uid or 0))
    if not 0 <= uid <= 0xFFFFFFFFFFFFFFFF:
        raise GshmemInvalid(f"{call}: team_config.uniqueid={uid} is not a 64-bit unique ID. Fix: use "
                            "get_team_unique_id() (or its .value)")
    try:
        handle = _gshmem.team_init(uid, int(npes), int(pe_idx_in_team))
    except _gshmem.GshmemError as e:
        if getattr(e, "status", None) == 1:  # INVALID_VALUE: bad arguments, NvshmemInvalid as for the splits
            raise GshmemInvalid(str(e)) from None
        raise
    return _register(handle, new_team_name or f"TEAM_{handle}", bool(new_team_name))


def team_get_config(team):
    """nvshmem_team_get_config: a TeamConfig of the team (num_contexts 0: gshmem has no communication contexts)."""
    _team_arg(team, "team_get_config", "team")
    config = TeamConfig(num_contexts=0)
    config.version = 2
    return config


def team_translate_pe(src_team, src_pe, dest_team):
    """The index in dest_team of src_team's member src_pe, or -1 where it is not a member of dest_team."""
    src = _team_arg(src_team, "team_translate_pe", "src_team")
    n = _gshmem.team_n_pes(src)
    if not 0 <= int(src_pe) < n:
        raise GshmemInvalid(f"team_translate_pe: src_pe={src_pe} is out of range for src_team (0..{n - 1})")
    dest = int(Teams[dest_team]) if isinstance(dest_team, str) else int(dest_team)
    return _gshmem.team_translate_pe(src, int(src_pe), dest)


def team_destroy(team):
    """Every member calls: destroys a team a split made (by handle or name) and removes it from Teams. As in
    nvshmem4py, an unknown name raises KeyError and a handle that is not a live team (never made, destroyed
    already, or this PE is not a member) does nothing; a predefined team raises NvshmemInvalid."""
    require_init("team_destroy")
    t = Teams[team] if isinstance(team, str) else team
    if int(t) in _PREDEFINED_HANDLES:
        raise GshmemInvalid(f"team_destroy: {t!r} is a predefined team, which cannot be destroyed")
    if _gshmem.team_n_pes(int(t)) > 0:
        _gshmem.team_destroy(int(t))
    Teams.remove_by_value(int(t))
