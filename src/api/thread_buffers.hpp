// Internal to the API layer (thread_buffers.cpp): the thread level a plain gshmem_init provides.
#pragma once

namespace gshmem::host {
// gshmem_init / gshmemx_init_attr provide GSHMEM_THREAD_SERIALIZED (NVSHMEM's nvshmem_init asks for that level).
void reset_thread_level();
}  // namespace gshmem::host
