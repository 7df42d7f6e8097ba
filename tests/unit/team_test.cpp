// The GPU teams (TEAM_SAME_GPU, TEAM_GPU_LEADERS) from a PE -> device table: one PE per GPU, several PEs per GPU
// round-robin and in blocks, uneven counts, CPU PEs, layouts that are not evenly spaced (member lists), and the
// team this PE is not in (a PE that is not the lowest of its GPU). The multi-PE tests (tests/mp/host_api.cpp) see CPU PEs
// only, where every PE is a device of its own; these cover the other layouts. Also the team value's arithmetic for a
// team held as a member list (gshmem/team_value.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "team/team.hpp"

namespace {

using gshmem::GpuTeams;
using gshmem::gpu_teams;
using gshmem::MemberSet;
using gshmem::TeamValue;

// device_of for PE p = "gpu" + gpu[p] (a negative entry: a CPU PE, a device of its own)
std::vector<std::string> devices(const std::vector<int>& gpu) {
  std::vector<std::string> d;
  for (std::size_t p = 0; p < gpu.size(); ++p)
    d.push_back(gpu[p] < 0 ? "cpu " + std::to_string(p) : "gpu " + std::to_string(gpu[p]));
  return d;
}

void expect_list(const MemberSet& t, const std::vector<int>& members, int my_rank, const char* what, int me) {
  EXPECT_EQ(t.members, members) << what << " on PE " << me;
  EXPECT_EQ(t.my_rank, my_rank) << what << " on PE " << me;
}

void expect_team(const MemberSet& t, int start, int stride, int size, int my_rank, const char* what, int me) {
  std::vector<int> m;
  for (int i = 0; i < size; ++i) m.push_back(start + i * stride);
  expect_list(t, m, my_rank, what, me);
}

TEST(GpuTeams, OnePePerGpu) {
  const auto d = devices({0, 1, 2, 3});
  for (int me = 0; me < 4; ++me) {
    const GpuTeams g = gpu_teams(d, me);
    expect_team(g.same_gpu, me, 1, 1, 0, "same_gpu", me);
    expect_team(g.leaders, 0, 1, 4, me, "leaders", me);
    EXPECT_TRUE(g.leaders_absent.empty());
  }
}

TEST(GpuTeams, CpuPes) {
  for (int n = 1; n <= 4; ++n) {
    const auto d = devices(std::vector<int>(static_cast<std::size_t>(n), -1));
    for (int me = 0; me < n; ++me) {
      const GpuTeams g = gpu_teams(d, me);
      expect_team(g.same_gpu, me, 1, 1, 0, "same_gpu", me);
      expect_team(g.leaders, 0, 1, n, me, "leaders", me);
    }
  }
}

TEST(GpuTeams, RoundRobin) {  // 6 PEs on 3 GPUs, PE p on GPU p % 3 (gshmem's own choice)
  const auto d = devices({0, 1, 2, 0, 1, 2});
  for (int me = 0; me < 6; ++me) {
    const GpuTeams g = gpu_teams(d, me);
    expect_team(g.same_gpu, me % 3, 3, 2, me / 3, "same_gpu", me);
    if (me < 3) {
      expect_team(g.leaders, 0, 1, 3, me, "leaders", me);
    } else {
      EXPECT_TRUE(g.leaders.members.empty()) << me;
      EXPECT_TRUE(g.not_a_leader);
      EXPECT_NE(g.leaders_absent.find("PE " + std::to_string(me) + " is not in GSHMEMX_TEAM_GPU_LEADERS"),
                std::string::npos) << g.leaders_absent;
      EXPECT_NE(g.leaders_absent.find("shares its GPU with PE " + std::to_string(me % 3)), std::string::npos)
          << g.leaders_absent;
    }
  }
}

TEST(GpuTeams, Blocks) {  // 6 PEs on 3 GPUs, two consecutive PEs each
  const auto d = devices({0, 0, 1, 1, 2, 2});
  for (int me = 0; me < 6; ++me) {
    const GpuTeams g = gpu_teams(d, me);
    expect_team(g.same_gpu, me - me % 2, 1, 2, me % 2, "same_gpu", me);
    if (me % 2 == 0) expect_team(g.leaders, 0, 2, 3, me / 2, "leaders", me);
    else EXPECT_TRUE(g.leaders.members.empty() && g.not_a_leader) << me;
  }
}

TEST(GpuTeams, UnevenRoundRobin) {  // 3 PEs on 2 GPUs: GPU 0 has PEs 0 and 2, GPU 1 has PE 1
  const auto d = devices({0, 1, 0});
  expect_team(gpu_teams(d, 0).same_gpu, 0, 2, 2, 0, "same_gpu", 0);
  expect_team(gpu_teams(d, 1).same_gpu, 1, 1, 1, 0, "same_gpu", 1);
  expect_team(gpu_teams(d, 2).same_gpu, 0, 2, 2, 1, "same_gpu", 2);
  expect_team(gpu_teams(d, 0).leaders, 0, 1, 2, 0, "leaders", 0);
  expect_team(gpu_teams(d, 1).leaders, 0, 1, 2, 1, "leaders", 1);
  EXPECT_TRUE(gpu_teams(d, 2).not_a_leader);
}

TEST(GpuTeams, NotEvenlySpaced) {
  // GPU 0: PEs 0, 1, 3 (not evenly spaced: a member list); GPU 1: PE 2. Leaders 0, 2 are evenly spaced.
  const auto d = devices({0, 0, 1, 0});
  for (int me : {0, 1, 3}) {
    const GpuTeams g = gpu_teams(d, me);
    expect_list(g.same_gpu, {0, 1, 3}, me == 3 ? 2 : me, "same_gpu", me);
  }
  expect_team(gpu_teams(d, 2).same_gpu, 2, 1, 1, 0, "same_gpu", 2);
  expect_team(gpu_teams(d, 0).leaders, 0, 2, 2, 0, "leaders", 0);
  expect_team(gpu_teams(d, 2).leaders, 0, 2, 2, 1, "leaders", 2);
  EXPECT_TRUE(gpu_teams(d, 1).not_a_leader && gpu_teams(d, 3).not_a_leader);
  // leaders 0, 1, 3 (GPU 0: PEs 0, 2; GPU 1: PE 1; GPU 2: PE 3): a member list on each leader; PE 2 is none
  const auto e = devices({0, 1, 0, 2});
  for (int me : {0, 1, 3}) {
    const GpuTeams g = gpu_teams(e, me);
    expect_list(g.leaders, {0, 1, 3}, me == 3 ? 2 : me, "leaders", me);
    EXPECT_FALSE(g.not_a_leader) << me;
    EXPECT_TRUE(g.leaders_absent.empty()) << g.leaders_absent;
  }
  EXPECT_TRUE(gpu_teams(e, 2).not_a_leader && gpu_teams(e, 2).leaders.members.empty());
}

// A member list (any order) against a strided team: world PE of each index, index of each world PE (-1 outside),
// translation both ways; host code reads host_members, never the device pointer.
TEST(TeamValueList, WorldPeRankAndTranslate) {
  const std::int32_t list[] = {5, 0, 3, 6, 2};
  TeamValue t{list[0], 0, 5, 2, nullptr, list};
  const std::int32_t* poison = reinterpret_cast<const std::int32_t*>(0x10);  // would fault if host code read it
  t.members = poison;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(gshmem::team_world_pe(t, i), list[i]) << i;
  for (int pe = -1; pe <= 8; ++pe) {
    int want = -1;
    for (int i = 0; i < 5; ++i)
      if (list[i] == pe) want = i;
    EXPECT_EQ(gshmem::team_rank_of(t, pe), want) << pe;
    EXPECT_EQ(gshmem::team_is_member(t, pe), want >= 0) << pe;
  }
  const TeamValue world{0, 1, 8, 3, nullptr, nullptr}, evens{0, 2, 4, -1, nullptr, nullptr};
  for (int i = -1; i <= 5; ++i) {
    EXPECT_EQ(gshmem::team_translate(t, i, world), i < 0 || i >= 5 ? -1 : list[i]) << i;
    EXPECT_EQ(gshmem::team_translate(t, i, evens), i < 0 || i >= 5 || list[i] % 2 ? -1 : list[i] / 2) << i;
  }
  for (int w = 0; w < 8; ++w) EXPECT_EQ(gshmem::team_translate(world, w, t), gshmem::team_rank_of(t, w)) << w;
  // the same set as a list and as a progression agree
  const std::int32_t odd[] = {1, 3, 5, 7};
  const TeamValue as_list{1, 0, 4, 0, nullptr, odd}, as_stride{1, 2, 4, 0, nullptr, nullptr};
  for (int pe = 0; pe < 9; ++pe) EXPECT_EQ(gshmem::team_rank_of(as_list, pe), gshmem::team_rank_of(as_stride, pe));
}

}  // namespace
