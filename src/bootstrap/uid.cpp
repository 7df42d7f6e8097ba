// The unique id: {magic, IPv4 address, port, random secret} packed into gshmemx_uniqueid_t, and the listener
// the creating process keeps until it joins the job it describes.
#include <arpa/inet.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <mutex>
#include <vector>

#include "bootstrap/secret.hpp"
#include "bootstrap/starts.hpp"
#include "runtime/config.hpp"
#include "runtime/error.hpp"
#include "runtime/log.hpp"

namespace gshmem::bootstrap {
namespace {

inline constexpr std::uint32_t kUidMagic = 0x49555347;  // "GSUI"

// Layout of gshmemx_uniqueid_t::internal (little-endian integers; address in network order).
struct UidLayout {
  std::uint32_t magic;
  std::uint8_t ipv4[4];
  std::uint16_t port;
  std::uint16_t reserved;
  std::uint8_t secret[16];
  std::uint8_t unused[96];
};
static_assert(sizeof(gshmemx_uniqueid_t) == GSHMEMX_UNIQUEID_BYTES, "the unique id is 128 bytes");
static_assert(offsetof(gshmemx_uniqueid_t, internal) == 4, "the unique id's version is its first 4 bytes");
static_assert(sizeof(UidLayout) == sizeof(gshmemx_uniqueid_t::internal), "UidLayout must fill the unique id");
static_assert(offsetof(UidLayout, ipv4) == 4 && offsetof(UidLayout, port) == 8 && offsetof(UidLayout, secret) == 12,
              "UidLayout offsets are part of the unique id format");

struct Listener {
  UidInfo info;
  net::UniqueFd fd;
  std::uint64_t serial = 0;  // 1 for this process's first id, 2 for the next, ...
};
std::mutex g_mutex;
std::vector<Listener> g_listeners;  // made by make_unique_id in this process, not yet joined
std::uint64_t g_made = 0;           // ids made by this process

}  // namespace

void pack_unique_id(const UidInfo& info, gshmemx_uniqueid_t* uid) {
  std::memset(uid, 0, sizeof *uid);
  uid->version = GSHMEMX_UNIQUEID_VERSION;
  auto* p = reinterpret_cast<std::uint8_t*>(uid->internal);
  for (int i = 0; i < 4; ++i) p[offsetof(UidLayout, magic) + i] = static_cast<std::uint8_t>(kUidMagic >> (8 * i));
  std::memcpy(p + offsetof(UidLayout, ipv4), &info.ip.s_addr, 4);
  p[offsetof(UidLayout, port)] = static_cast<std::uint8_t>(info.port & 0xff);
  p[offsetof(UidLayout, port) + 1] = static_cast<std::uint8_t>(info.port >> 8);
  std::memcpy(p + offsetof(UidLayout, secret), info.secret.data(), 16);
}

UidInfo unpack_unique_id(const gshmemx_uniqueid_t* uid) {
  if (!uid)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "unique id: the pointer is NULL. Fix: pass the gshmemx_uniqueid_t that "
         "gshmemx_get_uniqueid filled on rank 0 (gshmemx_set_attr_uniqueid_args(rank, nranks, &uid, &attr))");
  const auto* p = reinterpret_cast<const std::uint8_t*>(uid->internal);
  std::uint32_t magic = 0;
  for (int i = 0; i < 4; ++i) magic |= static_cast<std::uint32_t>(p[offsetof(UidLayout, magic) + i]) << (8 * i);
  UidInfo info;
  info.port = static_cast<std::uint16_t>(p[offsetof(UidLayout, port)] | (p[offsetof(UidLayout, port) + 1] << 8));
  if (uid->version != GSHMEMX_UNIQUEID_VERSION || magic != kUidMagic || info.port == 0)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "unique id: this is not a gshmem unique id (version {}, expected {}; magic 0x{:08x}, expected 0x{:08x}; "
         "port {}): it was not made by gshmemx_get_uniqueid, or it was changed or truncated on the way. Fix: pass "
         "the bytes gshmemx_get_uniqueid produced on rank 0 unchanged (all {} bytes) to every rank",
         uid->version, GSHMEMX_UNIQUEID_VERSION, magic, kUidMagic, info.port, sizeof *uid);
  std::memcpy(&info.ip.s_addr, p + offsetof(UidLayout, ipv4), 4);
  std::memcpy(info.secret.data(), p + offsetof(UidLayout, secret), 16);
  return info;
}

std::unique_ptr<TcpStoreServer> new_server(int nranks, const Secret& secret, const char* what) {
  in_addr bind_ip = net::resolve_ipv4(config::get().bootstrap_addr, "GSHMEM_BOOTSTRAP_ADDR");
  auto fd = net::listen_tcp(bind_ip, 0, what);
  return std::make_unique<TcpStoreServer>(std::move(fd), nranks, secret, net::advertised_ip(bind_ip));
}

void make_unique_id(gshmemx_uniqueid_t* uid) {
  if (!uid)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "gshmemx_get_uniqueid: the pointer is NULL. Fix: pass the address of a "
         "gshmemx_uniqueid_t");
  in_addr bind_ip = net::resolve_ipv4(config::get().bootstrap_addr, "GSHMEM_BOOTSTRAP_ADDR");
  Listener l;
  l.fd = net::listen_tcp(bind_ip, 0, "gshmemx_get_uniqueid");
  l.info.ip = net::advertised_ip(bind_ip);
  l.info.port = net::local_port(l.fd.get());
  l.info.secret = random_secret();
  pack_unique_id(l.info, uid);
  log::info("unique id: listening on {}:{} for the job's rendezvous", net::ip_text(l.info.ip), l.info.port);
  std::lock_guard<std::mutex> lock(g_mutex);
  l.serial = ++g_made;
  g_listeners.push_back(std::move(l));
}

std::uint64_t unique_ids_made() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_made;
}

void drop_unused_unique_ids(std::uint64_t made_before) noexcept {
  std::vector<Listener> unused;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto later = std::stable_partition(g_listeners.begin(), g_listeners.end(),
                                       [&](const Listener& l) { return l.serial > made_before; });
    std::move(later, g_listeners.end(), std::back_inserter(unused));
    g_listeners.erase(later, g_listeners.end());
  }
  for (const Listener& l : unused) {
    try {
      log::info("unique id {}:{}: no job of this process used it; no longer listening", net::ip_text(l.info.ip),
                l.info.port);
    } catch (...) {
    }
  }
}  // the listeners' fds close here

std::unique_ptr<Bootstrap> connect_uid(const gshmemx_uniqueid_t* uid, int rank, int nranks) {
  UidInfo info = unpack_unique_id(uid);
  if (nranks < 1)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "init with a unique id: nranks = {} (must be at least 1). Fix: pass the number "
         "of ranks to gshmemx_set_attr_uniqueid_args",
         nranks);
  if (rank < 0 || rank >= nranks)
    fail(GSHMEM_ERROR_INVALID_VALUE,
         "init with a unique id: rank {} is out of range 0..{}. Fix: pass each "
         "process's own rank in 0..nranks-1 to gshmemx_set_attr_uniqueid_args",
         rank, nranks - 1);
  // The process that made the id serves the rendezvous, whatever its rank.
  std::unique_ptr<TcpStoreServer> server;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (auto it = g_listeners.begin(); it != g_listeners.end(); ++it)
      if (it->info.port == info.port && it->info.ip.s_addr == info.ip.s_addr &&
          secret_equal(it->info.secret.data(), info.secret.data())) {
        server = std::make_unique<TcpStoreServer>(std::move(it->fd), nranks, info.secret, info.ip);
        g_listeners.erase(it);
        break;
      }
  }
  if (server) server->start();
  TcpBootstrap::Params p;
  p.kind = "uid";
  p.rank = rank;
  p.nranks = nranks;
  p.secret = info.secret;
  p.server_desc = "the process that called gshmemx_get_uniqueid";
  p.join_fix = fmt::format(
      "the process that called gshmemx_get_uniqueid must itself call gshmemx_init_attr with that id, and all {} "
      "ranks must call it with the same id and distinct ranks 0..{} (an id is good for one job; make a new one "
      "for the next)",
      nranks, nranks - 1);
  return join_tcp(std::move(p), info.ip, info.port, std::move(server));
}

}  // namespace gshmem::bootstrap
