// What every Kokkos kernel file shares: the execution and memory space the backend runs on, and
// unmanaged views over the raw device pointers the contract passes around.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace pcnn {
namespace kk {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
// Light-weight launches: on CUDA Kokkos then passes the functor as a kernel argument (up to 4 KiB)
// instead of staging it through constant memory with an event wait, which a stream capture
// cannot record (notes/tuning-kokkos.md, "Graph capture"). Host spaces ignore the hint.
using LaunchHint = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;
using TeamPolicy = Kokkos::TeamPolicy<ExecSpace, LaunchHint>;
using RangePolicy = Kokkos::RangePolicy<ExecSpace, LaunchHint>;
using Member = TeamPolicy::member_type;

// The one execution space instance every kernel and copy of the backend goes to: on CUDA an
// instance on a stream of the backend's own (the legacy default stream cannot be captured into
// a graph), on the host the default instance (kokkos_backend.cpp).
ExecSpace exec();

inline TeamPolicy team_policy(int league, int team_size, int vector_length = 1) {
  return TeamPolicy(exec(), league, team_size, vector_length);
}
using ScratchSpace = ExecSpace::scratch_memory_space;
using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;

// True when the kernels run on CPU threads (OpenMP, Serial): tile shapes and team sizes differ.
constexpr bool kOnHost = std::is_same<MemSpace, Kokkos::HostSpace>::value;

inline RangePolicy range(size_t n) { return RangePolicy(exec(), 0, n); }

// Work of one iteration, or of one team of one thread (a counter, the loss of a whole batch):
// on a CPU it runs on the calling thread (Kokkos::Serial) instead of in a parallel region whose
// other threads only wait at its end (a region costs a fork and a barrier of every thread: at 16
// threads a visible share of a small step); on a GPU it is a kernel on the backend's stream.
#ifdef KOKKOS_ENABLE_SERIAL
using SoloSpace = std::conditional_t<kOnHost, Kokkos::Serial, ExecSpace>;
#else
using SoloSpace = ExecSpace;
#endif
using SoloTeamPolicy = Kokkos::TeamPolicy<SoloSpace, LaunchHint>;
using SoloMember = SoloTeamPolicy::member_type;
template <class Space = SoloSpace>
Space solo_exec() {
  if constexpr (std::is_same<Space, ExecSpace>::value) return exec();
  else return Space();
}
inline Kokkos::RangePolicy<SoloSpace, LaunchHint> solo_range() {
  return Kokkos::RangePolicy<SoloSpace, LaunchHint>(solo_exec(), 0, 1);
}
// One team: of one thread on a CPU, of gpu_team_size threads on a GPU.
inline SoloTeamPolicy solo_team(int gpu_team_size) {
  return SoloTeamPolicy(solo_exec(), 1, kOnHost ? 1 : gpu_team_size);
}

// One team per row of a 2-D loop, the row's elements across the team's vector lanes
// (Kokkos::ThreadVectorRange): a CPU thread runs each row as one loop the compiler vectorises,
// a GPU warp covers it in coalesced steps. Rows are then decoded once, not per element.
inline TeamPolicy row_policy(size_t rows) {
  return kOnHost ? team_policy(int(rows), 1) : team_policy(int(rows), 1, 32);
}

// One team per image plane: its rows across the team's threads, a row's elements across vector
// lanes (a CPU thread walks the whole plane).
inline TeamPolicy plane_policy(size_t planes) {
  return kOnHost ? team_policy(int(planes), 1) : team_policy(int(planes), 4, 32);
}

// Team size for simple one-team-per-row kernels: one thread per team on a CPU (the team loop then
// vectorises), a few warps on a GPU.
inline int row_team_size() { return kOnHost ? 1 : 128; }

template <class T>
using DeviceView = Kokkos::View<T*, MemSpace, Unmanaged>;
template <class T>
using HostView = Kokkos::View<T*, Kokkos::HostSpace, Unmanaged>;
template <class T>
using ScratchView = Kokkos::View<T*, ScratchSpace, Unmanaged>;

// A Kokkos profiling region "pcnn::<op>" around one op of the backend, so a Kokkos tool
// (KOKKOS_PROFILE_LIBRARY, e.g. a kernel timer) sees ops as well as their kernels. Without a tool
// loaded it is one call and a predictable branch: the name is only turned into a std::string
// when a tool listens.
class OpRegion {
 public:
  explicit OpRegion(const char* name) : active_(Kokkos::Profiling::profileLibraryLoaded()) {
    if (active_) Kokkos::Profiling::pushRegion(name);
  }
  ~OpRegion() {
    if (active_) Kokkos::Profiling::popRegion();
  }
  OpRegion(const OpRegion&) = delete;
  OpRegion& operator=(const OpRegion&) = delete;

 private:
  bool active_;
};

}  // namespace kk
}  // namespace pcnn

#define PCNN_KK_REGION(op) const ::pcnn::kk::OpRegion pcnn_kk_region_("pcnn::" #op)
