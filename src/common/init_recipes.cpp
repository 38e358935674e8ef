#include "common/init_recipes.h"

#include <limits>
#include <stdexcept>

namespace opcheck {

const std::vector<InitRecipe>& init_recipes() {
  // kind, name, init_args, seeded, full_shape. `path` is the loader's: it becomes the spec's file.
  static const std::vector<InitRecipe> rows{
      {InitKind::Rand, "rand", {"low", "high", "max_true", "distinct", "distinct_along", "softmax_along",
                                "log_softmax_along"}, true, false},
      {InitKind::Randn, "randn", {"mean", "std", "softmax_along", "log_softmax_along"}, true, false},
      {InitKind::Zeros, "zeros", {}, false, false},
      {InitKind::Ones, "ones", {}, false, false},
      {InitKind::Arange, "arange", {}, false, false},
      {InitKind::Randint, "randint", {"low", "high", "distinct", "distinct_along"}, true, false},
      {InitKind::Uniform, "uniform", {"low", "high", "max_true", "distinct", "distinct_along", "softmax_along",
                                      "log_softmax_along"}, true, false},
      {InitKind::Data, "data", {}, false, true},
      {InitKind::Xavier, "xavier", {"gain"}, true, false},
      {InitKind::File, "file", {"path", "key"}, false, true},
      {InitKind::Eye, "eye", {}, false, true},
      {InitKind::Full, "full", {"fill_value"}, false, false},
  };
  return rows;
}

const InitRecipe& init_recipe(InitKind kind) {
  const auto& rows = init_recipes();
  const auto i = static_cast<std::size_t>(kind);
  if (i >= rows.size() || rows[i].kind != kind) throw std::logic_error("init_recipes() is not in InitKind order");
  return rows[i];
}

namespace recipe_detail {

double finfo_max(DType t) {
  switch (t) {
    case DType::Float16:
    case DType::Complex32: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Float32:
    case DType::Complex64: return static_cast<double>(std::numeric_limits<float>::max());
    default: return std::numeric_limits<double>::max();
  }
}

std::pair<std::int64_t, std::int64_t> iinfo_range(DType t) {
  switch (t) {
    case DType::Int8: return {-128, 127};
    case DType::Int16: return {-32768, 32767};
    case DType::Int32: return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    case DType::UInt8: return {0, 255};
    default: return {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
  }
}

DType real_part(DType t) {
  return t == DType::Complex32 ? DType::Float16 : t == DType::Complex64 ? DType::Float32 : DType::Float64;
}

const PyValue* find_arg(const TensorSpec& t, std::string_view key) {
  for (const auto& [k, v] : t.init_args)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace recipe_detail
}  // namespace opcheck
