// CPU start-up fixes that must run before the first libtorch op.
#pragma once

namespace opcheck::exec {

/// Lets oneDNN run bf16 matmul/linear/conv on AMX CPUs: requests AMX tile permission from Linux
/// (arch_prctl ARCH_REQ_XCOMP_PERM), and if that is refused caps oneDNN with ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16.
/// Idempotent; safe on CPUs without AMX.
void prepare_cpu();

}  // namespace opcheck::exec
