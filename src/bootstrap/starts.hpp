// The ways a job starts (see connect() in bootstrap.hpp); each returns a connected Bootstrap or throws Error.
#pragma once
#include <netinet/in.h>

#include <memory>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/net.hpp"
#include "bootstrap/tcp_client.hpp"
#include "bootstrap/tcp_server.hpp"

namespace gshmem::bootstrap {

std::unique_ptr<Bootstrap> connect_launcher();  // connect.cpp: gshmemrun's environment
std::unique_ptr<Bootstrap> connect_env();       // connect.cpp: torchrun-style environment
std::unique_ptr<Bootstrap> connect_uid(const gshmemx_uniqueid_t* uid, int rank, int nranks);  // uid.cpp
std::unique_ptr<Bootstrap> connect_mpi(const void* mpi_comm);  // mpi.cpp (mpi_comm may be null: WORLD)
std::unique_ptr<Bootstrap> make_single();                      // bootstrap.cpp

// The unique id's contents (uid.cpp).
struct UidInfo {
  in_addr ip{};
  std::uint16_t port = 0;
  Secret secret{};
};
void pack_unique_id(const UidInfo& info, gshmemx_uniqueid_t* uid);
// Throws Error(INVALID_VALUE) if the bytes are not a gshmem unique id.
UidInfo unpack_unique_id(const gshmemx_uniqueid_t* uid);
// A listener for a new rendezvous on GSHMEM_BOOTSTRAP_ADDR, ephemeral port, with a random secret.
std::unique_ptr<TcpStoreServer> new_server(int nranks, const Secret& secret, const char* what);

// Joins (and, with `server`, hosts) a TCP rendezvous at ip:port. Waits until every PE joined.
std::unique_ptr<TcpBootstrap> join_tcp(TcpBootstrap::Params params, in_addr ip, std::uint16_t port,
                                       std::unique_ptr<TcpStoreServer> server);

}  // namespace gshmem::bootstrap
