#pragma once
// What the CPU can run, from CPUID and XGETBV: a feature counts only when the CPU reports it and
// the OS saves its register state (XCR0), so AVX on a kernel without XSAVE support reads as absent.
// BRICK_CPU_DISABLE (feature names as describe() spells them, separated by commas or spaces) turns
// features off for the whole process, with those that build on them, so that one machine runs and
// measures what a CPU without them runs: BRICK_CPU_DISABLE=avxvnni gives the AVX2 kernels of an
// AVX2-only CPU, avx512f the AVX2 backend.
#include <string>
#include <string_view>

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

// Probed once per process, less the features BRICK_CPU_DISABLE turns off; cheap to call afterwards.
// Throws InvalidArgument (on every call) when BRICK_CPU_DISABLE names something that is not a
// feature.
const CpuFeatures& cpu_features();

// Probes the CPU now (used by cpu_features() and by tests); BRICK_CPU_DISABLE does not apply.
CpuFeatures detect_cpu_features();

// `features` with the ones named in `names` turned off, and every feature that needs one of them:
// avx takes avx2, fma and f16c; avx2 takes avxvnni and avx512f; avx512f takes the other avx512
// features; amx-tile takes amx-int8 and amx-bf16. Names as describe() spells them, separated by
// commas or spaces; an empty list changes nothing. Throws InvalidArgument naming an unknown name.
CpuFeatures without_features(CpuFeatures features, std::string_view names);

// "avx2 fma f16c ..." for reports.
std::string describe(const CpuFeatures& features);

}  // namespace brick
