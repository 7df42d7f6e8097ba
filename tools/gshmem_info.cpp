// gshmem-info: version, build configuration, every setting (default, current value, doc) and the GPUs this
// process sees with their links. `--json` prints the same as JSON.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "gshmem/version.h"
#include "runtime/config.hpp"
#include "transport/topology.hpp"

#include "gshmem_build_config.h"

int main(int argc, char** argv) {
  CLI::App app{"gshmem-info: gshmem's version, build, settings and the GPUs it would use"};
  bool json = false;
  app.add_flag("--json", json, "print JSON instead of text");
  CLI11_PARSE(app, argc, argv);

#ifdef GSHMEM_HAVE_CUDA
  const bool with_cuda = true;
#else
  const bool with_cuda = false;
#endif
  auto settings = gshmem::config::describe();
  auto topo = gshmem::topology::detect();

  if (json) {
    nlohmann::json j;
    j["version"] = GSHMEM_VERSION_STRING;
    j["build"] = {{"gpu_support", with_cuda}, {"cuda_architectures", GSHMEM_CUDA_ARCHS}};
    for (const auto& s : settings)
      j["settings"].push_back({{"name", s.name}, {"alias", s.alias}, {"type", s.type}, {"default", s.default_value},
                               {"value", s.current_value}, {"from_env", s.from_env}, {"doc", s.doc}});
    j["gpus"] = nlohmann::json::array();
    for (const auto& g : topo.gpus)
      j["gpus"].push_back({{"ordinal", g.ordinal}, {"name", g.name}, {"pci_bus_id", g.pci_bus_id},
                           {"compute_capability", fmt::format("{}.{}", g.cc_major, g.cc_minor)},
                           {"memory_bytes", g.memory_bytes}});
    j["links"] = nlohmann::json::array();
    for (const auto& l : topo.links)
      j["links"].push_back({{"a", l.a}, {"b", l.b}, {"p2p", l.p2p}, {"native_atomics", l.native_atomics},
                            {"nvlinks", l.nvlinks}});
    j["pe_kind"] = topo.why_not.empty() ? "gpu" : "cpu";
    if (!topo.why_not.empty()) j["cpu_reason"] = topo.why_not;
    std::puts(j.dump(2).c_str());
    return 0;
  }

  fmt::print("gshmem {}\n\n", GSHMEM_VERSION_STRING);
  fmt::print("Build\n  GPU support:          {}\n", with_cuda ? "yes" : "no (CPU PEs only)");
  if (with_cuda) fmt::print("  CUDA architectures:   {}\n", GSHMEM_CUDA_ARCHS);
  fmt::print("\nSettings (environment; NVSHMEM_* aliases are read when the GSHMEM_* name is unset)\n");
  for (const auto& s : settings) {
    fmt::print("  {:<26} = {:<10}{}\n", s.name, s.current_value, s.from_env ? "  (from environment)" : "");
    fmt::print("      {} [{}, default {}{}]\n", s.doc, s.type, s.default_value,
               *s.alias ? fmt::format(", also read as {}", s.alias) : std::string());
  }
  fmt::print("\nDevices\n");
  if (topo.gpus.empty()) fmt::print("  no GPU visible\n");
  for (const auto& g : topo.gpus)
    fmt::print("  GPU {}: {} (compute capability {}.{}, {:.1f} GiB, PCI {})\n", g.ordinal, g.name, g.cc_major,
               g.cc_minor, static_cast<double>(g.memory_bytes) / (1 << 30), g.pci_bus_id);
  for (const auto& l : topo.links)
    fmt::print("  GPU {} <-> GPU {}: {}{}\n", l.a, l.b,
               l.nvlinks ? fmt::format("NVLink x{}", l.nvlinks) : (l.p2p ? "P2P (PCIe or NVLink)" : "no P2P"),
               l.native_atomics ? ", native atomics" : "");
  if (topo.why_not.empty())
    fmt::print("\nPEs started here run on GPUs (one GPU per PE, by local rank).\n");
  else
    fmt::print("\nPEs started here run as CPU PEs: {}.\n", topo.why_not);
  return 0;
}
