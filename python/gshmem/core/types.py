"""Teams, exceptions, nvshmem4py's small types (Version, NvshmemStream, BufferTypes, NvshmemKernelObject) and
the state shared by gshmem.core's modules."""
from enum import IntEnum

from gshmem import _gshmem

__all__ = ["Teams", "MutableEnum", "NvshmemError", "NvshmemInvalid", "NvshmemWarning", "GshmemError",
           "GshmemInvalid", "GshmemNotSupported", "Version",
           "NvshmemStream", "NvshmemStreamsType", "BufferTypes", "NvshmemKernelObject"]

# gshmem's own errors come from the library with its message (the call, the cause and the fix) and .status.
GshmemError = _gshmem.GshmemError


class GshmemInvalid(GshmemError, ValueError):
    """A bad argument caught in Python before the library was called (the message names the call)."""

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg
        self.status = 1  # GSHMEM_ERROR_INVALID_VALUE


class GshmemNotSupported(GshmemError, NotImplementedError):
    """A call or option gshmem does not provide (yet), refused in Python before the library was called (the message
    names the call and what to do instead)."""

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg
        self.status = 3  # GSHMEM_ERROR_NOT_SUPPORTED


# nvshmem4py's names, so `except nvshmem.NvshmemError` keeps working after changing the import. (nvshmem4py's two
# classes are unrelated Exceptions; here NvshmemInvalid is also an NvshmemError and a ValueError, so a program that
# catches either one still catches what it caught there.) Both carry .msg, as nvshmem4py's do.
NvshmemError = GshmemError
NvshmemInvalid = GshmemInvalid


class NvshmemWarning(UserWarning):
    """nvshmem4py's warning class (gshmem.core warns with it where nvshmem4py only logs, e.g. free after
    finalize)."""

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg


class Team(int):
    """A team handle (an int, so it passes wherever a team does) with the name it is registered under in Teams."""

    def __new__(cls, value, name):
        t = super().__new__(cls, value)
        t.name = name
        return t

    def __repr__(self):
        return f"<Teams.{self.name}: {int(self)}>"

    # nvshmem4py's teams are plain ints: print and format as the number, and copy / pickle (a team kept in a
    # config that is deep-copied, or sent with torch.distributed.broadcast_object_list) as the same handle.
    def __str__(self):
        return str(int(self))

    def __format__(self, spec):
        return format(int(self), spec)

    def __reduce__(self):
        return (Team, (int(self), self.name))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


# Members of Teams that are numbers, not teams (TEAMS_MIN is the slot of the first split team, a team of its own).
_NOT_TEAMS = frozenset({"TEAMS_MIN"})


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

    def __iter__(cls):  # the names, as nvshmem4py's MutableEnum
        return iter(list(cls._teams))

    def __contains__(cls, item):  # a name (nvshmem4py's test), or a handle (gshmem's addition)
        return item in cls._teams or any(int(t) == item for k, t in cls._teams.items() if k not in _NOT_TEAMS)

    def keys(cls):
        return cls._teams.keys()

    def values(cls):
        return cls._teams.values()

    def items(cls):
        return cls._teams.items()

    def __repr__(cls):
        return "<Teams " + ", ".join(f"{k}={int(v)}" for k, v in cls._teams.items()) + ">"


class Teams(metaclass=_TeamsMeta):
    """The teams by name, as nvshmem4py's Teams: the predefined ones (TEAM_WORLD, TEAM_SHARED, TEAM_NODE,
    TEAM_SAME_MYPE_NODE, TEAM_SAME_GPU, TEAM_GPU_LEADERS and their *_INDEX aliases, TEAM_INVALID, and TEAMS_MIN: the
    first slot a split takes) and those team_split_* / team_init added (add / remove / remove_by_value; keys /
    values / items; iterating gives the names). Members are ints (Team), so they pass wherever a team handle does.
    TEAM_SAME_GPU: the PEs on this PE's GPU (a CPU PE is its own device); TEAM_GPU_LEADERS: the lowest PE of each
    GPU; on a PE that is not, team_my_pe and team_n_pes of it are -1 (a team it is not in)."""

    _teams = {}

    @classmethod
    def add(cls, name, value):
        """Registers a team under `name`; a name already there raises ValueError (NvshmemInvalid), as nvshmem4py's
        MutableEnum does."""
        if name in cls._teams:
            raise GshmemInvalid(f"Teams.add: a team named {name!r} is already registered (handle "
                                f"{int(cls._teams[name])}). Fix: pick another name, or team_destroy the old team")
        cls._set(name, value)

    @classmethod
    def _set(cls, name, value):  # gshmem.core's own registrations: a name made from a live handle replaces
        team = cls._teams[name] = Team(value, name)
        if cls._as_attribute(name):
            # Also a class attribute, so that Teams.TEAM_WORLD (written in every call of many programs) is a plain
            # attribute read, not a call of _TeamsMeta.__getattr__ (0.5 µs).
            type.__setattr__(cls, name, team)

    @classmethod
    def _forget(cls, name):
        del cls._teams[name]
        if isinstance(cls.__dict__.get(name), Team):
            type.__delattr__(cls, name)

    @classmethod
    def _as_attribute(cls, name):
        """Whether a team may be a class attribute under `name`: not one of Teams' or _TeamsMeta's own names."""
        return (name.isidentifier() and not hasattr(_TeamsMeta, name) and
                (name not in cls.__dict__ or isinstance(cls.__dict__[name], Team)))

    @classmethod
    def remove(cls, name):
        """Forgets the name (not the team: team_destroy destroys it); an unknown name raises ValueError."""
        if name not in cls._teams:
            raise GshmemInvalid(f"Teams.remove: no team named {name!r} is registered")
        cls._forget(name)

    @classmethod
    def remove_by_value(cls, value):
        for name in [n for n, t in cls._teams.items() if int(t) == int(value) and n not in _NOT_TEAMS]:
            cls._forget(name)


for _name, _value in (("TEAM_INVALID", -1), ("TEAM_WORLD", 0), ("TEAM_WORLD_INDEX", 0), ("TEAM_SHARED", 1),
                      ("TEAM_SHARED_INDEX", 1), ("TEAM_NODE", 2), ("TEAM_NODE_INDEX", 2),
                      ("TEAM_SAME_MYPE_NODE", 3), ("TEAM_SAME_MYPE_NODE_INDEX", 3), ("TEAM_SAME_GPU", 4),
                      ("TEAM_SAME_GPU_INDEX", 4), ("TEAM_GPU_LEADERS", 5), ("TEAM_GPU_LEADERS_INDEX", 5),
                      ("TEAMS_MIN", 6)):
    Teams._set(_name, _value)
PREDEFINED_TEAMS = frozenset(Teams._teams) - _NOT_TEAMS


class MutableEnum:
    """nvshmem4py's MutableEnum (what its Teams is): names -> values that can be added (a name already there:
    ValueError) and removed (an unknown name: ValueError; remove_by_value of an unknown value does nothing); read as
    attributes or items (KeyError / AttributeError for unknown names); `in` tests a name; keys / values / items;
    iterating gives the names. gshmem.core's Teams behaves the same way (its members are also team handles)."""

    def __init__(self, **members):
        self._members = dict(members)

    @classmethod
    def from_enum(cls, enum_cls):
        return cls(**{m.name: m.value for m in enum_cls})

    def add(self, key, value):
        if key in self._members:
            raise ValueError(f"MutableEnum.add: {key!r} is already a member")
        self._members[key] = value

    def remove(self, key):
        if key not in self._members:
            raise ValueError(f"MutableEnum.remove: {key!r} is not a member")
        del self._members[key]

    def remove_by_value(self, value):
        for key, v in self._members.items():
            if v == value:
                del self._members[key]
                return

    def __getattr__(self, item):
        members = self.__dict__.get("_members", {})
        if item in members:
            return members[item]
        raise AttributeError(f"MutableEnum has no member {item!r}")

    def __getitem__(self, item):
        try:
            return self._members[item]
        except KeyError:
            raise KeyError(f"MutableEnum has no member {item!r}") from None

    def __contains__(self, item):
        return item in self._members

    def __iter__(self):
        return iter(self._members)

    def keys(self):
        return self._members.keys()

    def values(self):
        return self._members.values()

    def items(self):
        return self._members.items()

    def __repr__(self):
        return "<MutableEnum " + ", ".join(f"{k}={v}" for k, v in self._members.items()) + ">"


class _State:
    initialized = False
    init_count = 0  # init() calls not yet matched by finalize() (nvshmem4py allows nested init / finalize)
    generation = 0  # counts the runtimes this process started: objects of an earlier one are stale
    init_pid = 0  # the process that initialised (a fork()ed child is not that PE)
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


# The API levels gshmem reports where nvshmem4py reports NVIDIA's: the NVSHMEM release (the compat headers'
# NVSHMEM_VENDOR_*_VERSION, include/gshmem/nvshmem/non_abi/nvshmem_version.h), its OpenSHMEM level
# (NVSHMEM_MAJOR/MINOR_VERSION) and the nvshmem4py release gshmem.core follows. python/tests check them against the
# headers and the bindings.
NVSHMEM_VENDOR_VERSION = (3, 4, 5)
OPENSHMEM_VERSION = (1, 3)
NVSHMEM4PY_VERSION = "0.4.1"


class Version:
    """What get_version() returns, with nvshmem4py's attributes; str() is libnvshmem_version, as there."""

    def __init__(self, openshmem_spec_version="", nvshmem4py_version="", libnvshmem_version="", gshmem_version=""):
        self.openshmem_spec_version = openshmem_spec_version
        self.nvshmem4py_version = nvshmem4py_version
        self.libnvshmem_version = libnvshmem_version
        self.gshmem_version = gshmem_version

    def __str__(self):
        return self.libnvshmem_version

    def __repr__(self):
        return (f"<gshmem {self.gshmem_version} Version: NVSHMEM API {self.libnvshmem_version}, OpenSHMEM spec "
                f"{self.openshmem_spec_version}, nvshmem4py API {self.nvshmem4py_version}>")


class NvshmemStream:
    """nvshmem4py's wrapper of a torch stream for the CUDA stream protocol: .handle and __cuda_stream__()."""

    def __init__(self, pt_stream):
        self.pt_stream = pt_stream
        self.handle = pt_stream.cuda_stream

    def __cuda_stream__(self):
        return (0, self.pt_stream.cuda_stream)


NvshmemStreamsType = object  # nvshmem4py: Union[torch Stream, NvshmemStream, cuda.core Stream]; any stream here


class BufferTypes(IntEnum):
    """nvshmem4py's kinds of tracked memory."""

    NORMAL = 0
    PEER = 1
    MULTIMEM = 2
    EXTERNAL = 3


class NvshmemKernelObject:
    """nvshmem4py's handle of loaded device code for module_init / library_init: NvshmemKernelObject.from_handle(h)
    (a CUmodule or CUlibrary as an int), from_obj (cuda.core ObjectCode), from_triton, from_cuda_bindings,
    from_obj_bytes (a cubin, loaded through cuda.core)."""

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("NvshmemKernelObject: use NvshmemKernelObject.from_handle / from_obj / from_triton / "
                           "from_cuda_bindings / from_obj_bytes")

    @classmethod
    def _make(cls, handle):
        self = object.__new__(cls)
        self.handle = int(handle)
        return self

    @staticmethod
    def from_handle(handle=None):
        return NvshmemKernelObject._make(handle)

    @staticmethod
    def from_obj(obj):
        return NvshmemKernelObject._make(int(obj.handle))

    @staticmethod
    def from_obj_bytes(obj_bytes):
        try:
            from cuda.core import ObjectCode
        except ImportError:
            from cuda.core.experimental import ObjectCode
        return NvshmemKernelObject._make(int(ObjectCode.from_cubin(obj_bytes).handle))

    @staticmethod
    def from_triton(triton_kernel):
        return NvshmemKernelObject._make(int(triton_kernel.handle))

    @staticmethod
    def from_cuda_bindings(cuda_kernel):
        return NvshmemKernelObject._make(int(cuda_kernel))
