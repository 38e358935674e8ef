// The static Python of `repro --python` scripts, from src/repro/script_assets/, compiled into the binary by CMake
// (opcheck_embed_text). repro/script.cpp joins them and fills their @NAME@ placeholders with the case's values.
#pragma once

#include <string_view>

namespace opcheck {

/// head.py: the docstring, the device and the case's comparison (placeholders): what a reader reads first.
std::string_view repro_script_head();
/// setup.py: the interpreter, the device's environment and imports, torch and the run's constants (placeholders).
std::string_view repro_script_setup();
/// load_tensor_file.py: reads `file:` inputs (.pt, .npy, .safetensors) as opcheck does.
std::string_view repro_script_load_tensor_file();
/// scaled.py: rand/uniform values in [low, high).
std::string_view repro_script_scaled();
/// distinct.py: index values drawn without repeats (an op whose result is undefined where indices repeat).
std::string_view repro_script_distinct();
/// place.py: a tensor in the manifest's strides and storage offset.
std::string_view repro_script_place();
/// inputs.py: inputs() and HOST_INPUTS (placeholders).
std::string_view repro_script_inputs();
/// available.py: an op where this torch has it, else a stand-in.
std::string_view repro_script_available();
/// sdpa_reference.py: opcheck's decomposition of scaled_dot_product_attention.
std::string_view repro_script_sdpa_reference();
/// rms_norm_reference.py: opcheck's decomposition of rms_norm.
std::string_view repro_script_rms_norm_reference();
/// call.py: lowp() and call(), the op call (placeholders).
std::string_view repro_script_call();
/// judge.py: opcheck's judgement (the float64 judge, backend freedoms, undefined results), tables as placeholders.
std::string_view repro_script_judge();
/// accumulation.py: the accumulation bound of an op that sums terms (its three runs, per element), its table as a
/// placeholder.
std::string_view repro_script_accumulation();
/// main.py: the reference and device runs, the comparison, the bundle check and main().
std::string_view repro_script_main();

}  // namespace opcheck
