// The rendezvous protocol spoken between the TCP store server (gshmemrun, or a thread of one PE) and every PE.
// Each message is a fixed 48-byte header, little-endian on the wire, followed by `length` payload bytes.
//
//   client -> server   Probe                      (server answers Welcome: proves it speaks this protocol)
//   client -> server   Join  {secret, nranks, pid}, header.rank = my rank
//   server -> client   Accept | Reject(code, text);   Ready once all nranks PEs joined
//   client -> server   Coll  seq, op, root, count + payload   (allgather / broadcast / barrier / finalize)
//   server -> client   CollResult seq + payload    | CollError(status, text) when the PEs disagree
//   client -> server   Abort text                  server -> others: Notice(PEER_FAILED, "PE k aborted: ...")
//   client -> server   Leave text                  this PE exits without gshmem_finalize ("its process exited
//                                                  with status 0"); server -> others: Notice(.., Left, ...)
//   server -> client   Notice(PEER_FAILED, text)   when a PE's connection drops before its finalize; header.op
//                                                  says what happened (NoticeKind), header.rank names the PE
//   client -> server   StatusQuery                 server -> client: StatusReply (who is missing), for errors
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"

namespace gshmem::bootstrap::wire {

inline constexpr std::uint32_t kMagic = 0x42485347;  // "GSHB"
inline constexpr std::uint16_t kVersion = 1;
inline constexpr std::uint64_t kMaxPayload = 1ull << 30;

enum class Type : std::uint16_t {
  Probe = 1,
  Welcome = 2,
  Join = 3,
  Accept = 4,
  Reject = 5,
  Ready = 6,
  Coll = 7,
  CollResult = 8,
  CollError = 9,
  Abort = 10,
  Notice = 11,
  StatusQuery = 12,
  StatusReply = 13,
  Leave = 14,
};

// What a Notice reports (Header::op of a Notice).
enum class NoticeKind : std::uint32_t { Died = 1, Aborted = 2, Left = 3 };

enum class Op : std::uint32_t { None = 0, Allgather = 1, Broadcast = 2, Barrier = 3, Finalize = 4 };
const char* op_name(Op op);

// Reject codes (Header::code of a Reject).
enum class RejectCode : std::uint32_t { Secret = 1, RankRange = 2, Duplicate = 3, SizeMismatch = 4 };
// StatusReply::code: which phase the server is in.
enum class Phase : std::uint32_t { Joining = 1, Collective = 2, Idle = 3 };

struct Header {
  std::uint32_t magic = kMagic;
  std::uint16_t version = kVersion;
  std::uint16_t type = 0;
  std::int32_t rank = -1;    // sender (client -> server) or the PE a notice is about
  std::int32_t root = -1;    // broadcast root
  std::uint32_t op = 0;      // Op of a collective
  std::uint32_t code = 0;    // RejectCode, status of CollError/Notice, Phase of StatusReply
  std::uint64_t seq = 0;     // collective sequence number (1, 2, ... per job)
  std::uint64_t count = 0;   // bytes each PE contributes (allgather/broadcast); joined count in StatusReply
  std::uint64_t length = 0;  // payload bytes that follow the header
};
static_assert(sizeof(Header) == 48, "wire::Header must be 48 bytes: it is the protocol's fixed header");
inline constexpr std::size_t kHeaderBytes = 48;

// Body of a Join.
struct JoinBody {
  std::uint8_t secret[16];
  std::uint32_t nranks;
  std::uint32_t pid;
};
static_assert(sizeof(JoinBody) == 24, "wire::JoinBody must be 24 bytes");
inline constexpr std::size_t kJoinBytes = 24;

void encode(const Header& h, std::uint8_t out[kHeaderBytes]);
Header decode(const std::uint8_t in[kHeaderBytes]);
std::vector<std::uint8_t> encode_join(const Secret& secret, std::uint32_t nranks, std::uint32_t pid);
bool decode_join(const std::vector<std::uint8_t>& payload, JoinBody& out);

// Header + payload as one byte string ready to send.
std::vector<std::uint8_t> frame(Type type, Header h, const void* payload = nullptr, std::size_t len = 0);
inline std::vector<std::uint8_t> frame(Type type, Header h, const std::string& text) {
  return frame(type, h, text.data(), text.size());
}

struct Frame {
  Header h;
  std::vector<std::uint8_t> payload;
  Type type() const { return static_cast<Type>(h.type); }
  std::string text() const { return std::string(payload.begin(), payload.end()); }
};

// Accumulates bytes from a socket and cuts them into frames.
class FrameReader {
 public:
  enum class Fill { Data, Empty, Eof, Error };
  // Reads what is available now without blocking.
  Fill fill(int fd, int* err = nullptr);
  enum class Next { Frame, Incomplete, Bad };
  // Bad: wrong magic or an oversized payload (not our protocol, or a corrupt stream).
  Next next(Frame& out);
  bool empty() const { return buf_.size() == start_; }

 private:
  std::vector<std::uint8_t> buf_;
  std::size_t start_ = 0;
};

}  // namespace gshmem::bootstrap::wire
