#include "bootstrap/wire.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace gshmem::bootstrap::wire {
namespace {

template <typename T>
void put(std::uint8_t*& p, T v) {
  auto u = static_cast<std::make_unsigned_t<T>>(v);
  for (std::size_t i = 0; i < sizeof(T); ++i) *p++ = static_cast<std::uint8_t>(u >> (8 * i));
}

template <typename T>
T get(const std::uint8_t*& p) {
  std::make_unsigned_t<T> u = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) u |= static_cast<std::make_unsigned_t<T>>(*p++) << (8 * i);
  return static_cast<T>(u);
}

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::Allgather:
      return "allgather";
    case Op::Broadcast:
      return "broadcast";
    case Op::Barrier:
      return "barrier";
    case Op::Finalize:
      return "finalize";
    default:
      return "unknown";
  }
}

void encode(const Header& h, std::uint8_t out[kHeaderBytes]) {
  std::uint8_t* p = out;
  put(p, h.magic);
  put(p, h.version);
  put(p, h.type);
  put(p, h.rank);
  put(p, h.root);
  put(p, h.op);
  put(p, h.code);
  put(p, h.seq);
  put(p, h.count);
  put(p, h.length);
}

Header decode(const std::uint8_t in[kHeaderBytes]) {
  const std::uint8_t* p = in;
  Header h;
  h.magic = get<std::uint32_t>(p);
  h.version = get<std::uint16_t>(p);
  h.type = get<std::uint16_t>(p);
  h.rank = get<std::int32_t>(p);
  h.root = get<std::int32_t>(p);
  h.op = get<std::uint32_t>(p);
  h.code = get<std::uint32_t>(p);
  h.seq = get<std::uint64_t>(p);
  h.count = get<std::uint64_t>(p);
  h.length = get<std::uint64_t>(p);
  return h;
}

std::vector<std::uint8_t> encode_join(const Secret& secret, std::uint32_t nranks, std::uint32_t pid) {
  std::vector<std::uint8_t> out(kJoinBytes);
  std::uint8_t* p = out.data();
  std::memcpy(p, secret.data(), 16);
  p += 16;
  put(p, nranks);
  put(p, pid);
  return out;
}

bool decode_join(const std::vector<std::uint8_t>& payload, JoinBody& out) {
  if (payload.size() != kJoinBytes) return false;
  const std::uint8_t* p = payload.data();
  std::memcpy(out.secret, p, 16);
  p += 16;
  out.nranks = get<std::uint32_t>(p);
  out.pid = get<std::uint32_t>(p);
  return true;
}

std::vector<std::uint8_t> frame(Type type, Header h, const void* payload, std::size_t len) {
  h.magic = kMagic;
  h.version = kVersion;
  h.type = static_cast<std::uint16_t>(type);
  h.length = len;
  std::vector<std::uint8_t> out(kHeaderBytes + len);
  encode(h, out.data());
  if (len) std::memcpy(out.data() + kHeaderBytes, payload, len);
  return out;
}

FrameReader::Fill FrameReader::fill(int fd, int* err) {
  bool got = false;
  for (;;) {
    if (start_ > 0 && start_ == buf_.size()) {
      buf_.clear();
      start_ = 0;
    }
    std::size_t old = buf_.size();
    buf_.resize(old + 65536);
    ssize_t n = ::recv(fd, buf_.data() + old, 65536, MSG_DONTWAIT);
    buf_.resize(old + (n > 0 ? static_cast<std::size_t>(n) : 0));
    if (n > 0) {
      got = true;
      continue;
    }
    if (n == 0) return got ? Fill::Data : Fill::Eof;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return got ? Fill::Data : Fill::Empty;
    if (err) *err = errno;
    return got ? Fill::Data : Fill::Error;
  }
}

FrameReader::Next FrameReader::next(Frame& out) {
  std::size_t avail = buf_.size() - start_;
  if (avail < kHeaderBytes) {
    // Reject a foreign stream as soon as its first bytes show it (do not wait for 48 of them).
    std::uint8_t m[4] = {0, 0, 0, 0};
    if (avail > 0) std::memcpy(m, buf_.data() + start_, std::min<std::size_t>(avail, 4));  // data() may be null
    std::uint8_t want[4];
    std::uint8_t* p = want;
    put(p, kMagic);
    return std::memcmp(m, want, std::min<std::size_t>(avail, 4)) == 0 ? Next::Incomplete : Next::Bad;
  }
  Header h = decode(buf_.data() + start_);
  if (h.magic != kMagic || h.length > kMaxPayload) return Next::Bad;
  if (avail < kHeaderBytes + h.length) return Next::Incomplete;
  out.h = h;
  const std::uint8_t* b = buf_.data() + start_ + kHeaderBytes;
  out.payload.assign(b, b + h.length);
  start_ += kHeaderBytes + h.length;
  return Next::Frame;
}

}  // namespace gshmem::bootstrap::wire
