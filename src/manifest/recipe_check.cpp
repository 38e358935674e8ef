#include "manifest/recipe_check.h"

#include <cstdint>
#include <vector>

#include "common/init_recipes.h"

namespace opcheck {
namespace {

/// A builder of init_values that builds nothing and keeps the first refusal: the same checks, in the same order, as
/// the exec layer's libtorch builder and the script's Python one.
struct RecipeCheck {
  using Values = int;
  using Shape = std::vector<std::int64_t>;
  std::string what, fix;

  void fail(const std::string& w, const std::string& f) {
    if (what.empty()) {
      what = w;
      fix = f;
    }
  }
  int rand(const Shape&, DType) { return 0; }
  int randint(std::int64_t, std::int64_t, const Shape&, DType) { return 0; }
  int randint_cast(std::int64_t, std::int64_t, const Shape&, DType) { return 0; }
  int at_most_true(int, std::int64_t) { return 0; }
  int distinct(std::int64_t, std::int64_t, const Shape&, std::int64_t, DType) { return 0; }
  int softmax(int, std::int64_t, bool) { return 0; }
  int scaled(int, const PyValue&, const PyValue&) { return 0; }
  int complex(int, int) { return 0; }
  int randn(const Shape&, DType) { return 0; }
  int times(int, const PyValue&) { return 0; }
  int plus(int, const PyValue&) { return 0; }
  int zeros(const Shape&, DType) { return 0; }
  int ones(const Shape&, DType) { return 0; }
  int arange(std::int64_t, const Shape&, DType) { return 0; }
  int xavier(const Shape&, DType, double) { return 0; }
  int full(const Shape&, const PyValue*, DType) { return 0; }
  int data(const PyValue&, DType) { return 0; }  // the loader checks data: values itself
  int file(const std::string&, const PyValue*) { return 0; }  // and opens and checks the file
  int eye(std::int64_t, DType) { return 0; }
};

}  // namespace

std::string recipe_problem(const TensorSpec& t, std::string& fix) {
  std::vector<std::int64_t> shape = t.shape;
  if (!init_recipe(t.init).full_shape)
    for (std::size_t d = 0; d < shape.size() && d < t.stride.size(); ++d)
      if (t.stride[d] == 0 && shape[d] > 1) shape[d] = 1;  // as exec/inputs.cpp builds the values
  RecipeCheck check;
  init_values(t, shape, check);
  fix = check.fix;
  return check.what;
}

}  // namespace opcheck
