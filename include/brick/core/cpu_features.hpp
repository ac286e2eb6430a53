#pragma once
// What the CPU can run, from CPUID and XGETBV: a feature counts only when the CPU reports it and
// the OS saves its register state (XCR0), so AVX on a kernel without XSAVE support reads as absent.
#include <string>

namespace brick {

struct CpuFeatures {
  bool sse42 = false;
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512dq = false;
  bool avx512vl = false;
  bool avx512vnni = false;
  bool avx512bf16 = false;
  bool gfni = false;  // Galois-field byte affine transforms (the CPU bit; EVEX forms also need avx512f)
  bool avxvnni = false;
  // AMX here means CPUID + XCR0 tile state; Linux also requires a per-process permission request,
  // which runtime/simd_config checks before any tile instruction runs.
  bool amx_tile = false;
  bool amx_int8 = false;
  bool amx_bf16 = false;
  bool invariant_tsc = false;

  std::string vendor;
  std::string brand;
};

// Probed once per process; cheap to call afterwards.
const CpuFeatures& cpu_features();

// Probes the CPU now (used by cpu_features() and by tests).
CpuFeatures detect_cpu_features();

// "avx2 fma f16c ..." for reports.
std::string describe(const CpuFeatures& features);

}  // namespace brick
