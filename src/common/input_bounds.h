// What the op allows of an input that it uses as an index or a mask, or expects of an input it takes as its forward's
// result: the one table of which argument of which op is an index into which dim of which other argument (and where
// its values may not repeat), or a softmax output, and the bounds it gives for one Case. The load stage narrows random
// inputs to these bounds (manifest/narrow_inputs.cpp); the exec layer names them when pinned values make the CPU
// reference raise. No libtorch here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "opcheck/case.h"

namespace opcheck {

/// The bound one op gives one tensor input of one Case.
struct InputBound {
  enum class Kind {
    IndexRange,  // integer values within [low, high): an index into a dim (or into every element) of another input
    TrueCount,   // a bool mask with at most max_true true values (each counted as often as broadcasting repeats it)
    Distinct,    // an index whose values may not repeat along `along` (-1: anywhere): the op's result is undefined
                 // where indices repeat (index_copy, index_put and put without accumulate, scatter without reduce)
    SoftmaxOutput,  // the `output` of a (log_)softmax backward op: a (log_)softmax along `along`
  };
  Kind kind = Kind::IndexRange;
  std::size_t input = 0;   // position of the input in Case::inputs
  int element = -1;        // element of a tensor_list input, -1 for a tensor input
  std::string arg;         // the argument's name as the op's Python signature spells it: "index", "indices[1]"
  std::int64_t low = 0;    // IndexRange: the lowest value the op accepts (-size where it takes negative indices)
  std::int64_t high = 0;   // IndexRange: one past the highest, the size of the indexed dim
  std::int64_t max_true = 0;  // TrueCount: most true values the mask may hold (counted over its stored values)
  std::int64_t limit = 0;     // TrueCount: most true values the op takes once the mask is broadcast (source's size)
  std::int64_t spread = 1;    // TrueCount: elements of the broadcast shape per element of the mask's own shape
  std::int64_t along = -1;    // Distinct, SoftmaxOutput: the dim of the input (non-negative); Distinct: -1 for all
  std::int64_t count = 0;     // Distinct: values that must differ (along `along`, or the input's elements)
  bool log = false;           // SoftmaxOutput: a log_softmax
  std::string impossible;     // Distinct: why no draw can avoid repeats where the op's shapes alone decide it
  std::string what;        // what the bound is: "the size of dim 0 of self", "the 8 elements of source"

  const TensorSpec& spec(const Case& c) const;
  TensorSpec& spec(Case& c) const;
};

/// The bounds the case's op gives its tensor inputs, as far as the manifest's shapes and values decide them (a dim
/// written as a value, the indexed tensor's shape). Empty for ops outside the table and for inputs whose bound
/// cannot be known before the tensors exist (a shape read from a file).
std::vector<InputBound> input_bounds(const Case& c);

/// The spec's values are drawn at random by a recipe that takes a range (rand, uniform, randint), rather than pinned
/// (data, file) or made by a rule (zeros, arange, ...).
bool drawn_at_random(const TensorSpec& t);

}  // namespace opcheck
