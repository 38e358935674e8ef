#include "manifest/pt_file.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>

#include "common/text_escape.h"
#include "manifest/tensor_layout.h"

namespace opcheck {
namespace {

constexpr std::int64_t kMaxPickleBytes = 16 << 20;  // a single tensor's record is a few hundred bytes

std::uint64_t le(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

struct ZipEntry {
  std::uint64_t data_offset = 0, size = 0;
  int method = 0;
};

// The archive's entries by name, from its central directory; "" or the problem.
std::string read_zip(std::ifstream& in, std::uint64_t file_size, std::map<std::string, ZipEntry>& entries) {
  const std::uint64_t tail = std::min<std::uint64_t>(file_size, 65535 + 22);
  std::vector<unsigned char> buf(tail);
  in.seekg(static_cast<std::streamoff>(file_size - tail));
  if (!in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(tail))) return "cannot be read";
  std::int64_t eocd = -1;
  for (std::int64_t i = static_cast<std::int64_t>(tail) - 22; i >= 0; --i)
    if (le(&buf[i], 4) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd < 0)
    return "is not a zip archive as torch.save writes (no end-of-archive record): truncated or not a .pt file";
  std::uint64_t cd_size = le(&buf[eocd + 12], 4), cd_offset = le(&buf[eocd + 16], 4);
  std::uint64_t count = le(&buf[eocd + 10], 2);
  // ZIP64: the real figures are in the ZIP64 end record the locator (just before the end record) points at.
  if ((cd_offset == 0xffffffff || cd_size == 0xffffffff || count == 0xffff) && eocd >= 20 &&
      le(&buf[eocd - 20], 4) == 0x07064b50) {
    const std::uint64_t z64 = le(&buf[eocd - 20 + 8], 8);
    unsigned char rec[56];
    if (z64 + 56 > file_size) return "is truncated (its ZIP64 directory lies past the end of the file)";
    in.seekg(static_cast<std::streamoff>(z64));
    if (!in.read(reinterpret_cast<char*>(rec), 56) || le(rec, 4) != 0x06064b50) return "has a damaged ZIP64 directory";
    count = le(rec + 32, 8);
    cd_size = le(rec + 40, 8);
    cd_offset = le(rec + 48, 8);
  }
  if (cd_offset > file_size || cd_size > file_size - cd_offset)
    return "is truncated (its zip directory lies past the end of the file)";
  if (cd_size > kMaxPickleBytes) return "has a zip directory too large for a single tensor";
  std::vector<unsigned char> cd(cd_size);
  in.seekg(static_cast<std::streamoff>(cd_offset));
  if (!in.read(reinterpret_cast<char*>(cd.data()), static_cast<std::streamsize>(cd_size))) return "cannot be read";
  std::size_t p = 0;
  for (std::uint64_t e = 0; e < count; ++e) {
    if (p + 46 > cd.size() || le(&cd[p], 4) != 0x02014b50) return "has a damaged zip directory";
    ZipEntry z;
    z.method = static_cast<int>(le(&cd[p + 10], 2));
    std::uint64_t csize = le(&cd[p + 20], 4), usize = le(&cd[p + 24], 4), local = le(&cd[p + 42], 4);
    const std::size_t name_len = le(&cd[p + 28], 2), extra_len = le(&cd[p + 30], 2), comment_len = le(&cd[p + 32], 2);
    if (p + 46 + name_len + extra_len + comment_len > cd.size()) return "has a damaged zip directory";
    const std::string name(reinterpret_cast<const char*>(&cd[p + 46]), name_len);
    // ZIP64 extra field: the 8-byte figures, in this order, for those that are 0xffffffff above.
    for (std::size_t x = p + 46 + name_len; x + 4 <= p + 46 + name_len + extra_len;) {
      const std::size_t id = le(&cd[x], 2), len = le(&cd[x + 2], 2);
      if (x + 4 + len > p + 46 + name_len + extra_len) break;
      if (id == 1) {
        std::size_t q = x + 4;
        if (usize == 0xffffffff && q + 8 <= x + 4 + len) usize = le(&cd[q], 8), q += 8;
        if (csize == 0xffffffff && q + 8 <= x + 4 + len) csize = le(&cd[q], 8), q += 8;
        if (local == 0xffffffff && q + 8 <= x + 4 + len) local = le(&cd[q], 8);
      }
      x += 4 + len;
    }
    p += 46 + name_len + extra_len + comment_len;
    unsigned char lh[30];
    if (local + 30 > file_size) return "is truncated (entry " + name + " starts past the end of the file)";
    in.seekg(static_cast<std::streamoff>(local));
    if (!in.read(reinterpret_cast<char*>(lh), 30) || le(lh, 4) != 0x04034b50)
      return "has a damaged zip entry " + name;
    z.data_offset = local + 30 + le(lh + 26, 2) + le(lh + 28, 2);
    z.size = csize;
    if (z.data_offset > file_size || csize > file_size - z.data_offset)
      return "is truncated (entry " + name + " needs " + std::to_string(csize) + " bytes at offset " +
             std::to_string(z.data_offset) + ", the file has " + std::to_string(file_size) + ")";
    if (z.method == 0 && usize != csize) return "has a damaged zip entry " + name;
    entries[name] = z;
  }
  return {};
}

// The subset of pickle (protocol 2-5) that torch.save writes for a tensor.
struct PVal {
  enum Kind { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, PersId, Reduced, Mark } kind = None;
  std::int64_t i = 0;
  std::string s;  // Str; Global: "module.name"
  std::vector<std::shared_ptr<PVal>> items;  // Tuple/List; PersId: [pid]; Reduced: [callable, args]
  std::vector<std::pair<std::shared_ptr<PVal>, std::shared_ptr<PVal>>> entries;  // Dict, OrderedDict: SETITEM(S)
};
using P = std::shared_ptr<PVal>;

P make(PVal::Kind k) {
  auto v = std::make_shared<PVal>();
  v->kind = k;
  return v;
}

std::string kind_name(const PVal& v) {
  switch (v.kind) {
    case PVal::None: return "None";
    case PVal::Bool: return "bool";
    case PVal::Int: return "int";
    case PVal::Float: return "float";
    case PVal::Str: return "str";
    case PVal::Tuple: return "tuple";
    case PVal::List: return "list";
    case PVal::Dict: return "dict";
    case PVal::Global: return v.s;
    case PVal::PersId: return "persistent id";
    case PVal::Reduced: return v.items[0]->kind == PVal::Global ? v.items[0]->s : "object";
    case PVal::Mark: return "mark";
  }
  return "value";
}

// Runs the pickle machine over one record: each opcode torch.save writes for a tensor is one step, checked against
// the bytes; any other opcode, or bytes that do not hold what an opcode needs, is a damaged pickle.
// The globals libtorch's unpickler (torch::jit::pickle_load, which builds the inputs) reads in a torch.save file:
// the tensor and Parameter records, their storages, the empty OrderedDict of a tensor's hooks, torch.device. Any
// other (a NumPy array, a dtype, complex, set, bytes, a class of the saver's) makes it fail the whole file.
bool libtorch_reads_global(const std::string& name) {
  static const char* const kRead[] = {"torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter",
                                      "collections.OrderedDict", "torch.device"};
  for (const char* r : kRead)
    if (name == r) return true;
  const std::string storage = "Storage";
  return name.rfind("torch.", 0) == 0 && name.find('.', 6) == std::string::npos && name.size() > 6 + storage.size() &&
         name.compare(name.size() - storage.size(), storage.size(), storage) == 0;
}

class Unpickler {
 public:
  Unpickler(const std::vector<unsigned char>& b, std::vector<P>& filled) : b_(b), filled_(filled) {}

  // "" with the pickled value in `result`, else what is damaged.
  std::string run(P& result) {
    while (p_ < b_.size()) {
      bool stopped = false;
      if (std::string problem = step(b_[p_++], result, stopped); !problem.empty()) return problem;
      if (stopped) return {};
      if (stack_.size() > 100000) return bad("a stack deeper than a tensor record needs");
    }
    return bad("no STOP");
  }

 private:
  bool need(std::size_t n) const { return p_ + n <= b_.size(); }
  std::string bad(const std::string& what) const {
    return "holds a damaged pickle (" + what + " at byte " + std::to_string(p_) + ")";
  }
  static std::string unreadable(const std::string& global) {
    return "holds a " + printable_text(global) + " value, which libtorch's unpickler cannot read (it reads tensors, " +
           "numbers, strings, None, lists, tuples, dicts and torch.device)";
  }
  P pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() == marks_.back())) return nullptr;
    P v = stack_.back();
    stack_.pop_back();
    return v;
  }
  bool pop_mark(std::vector<P>& items) {
    if (marks_.empty()) return false;
    items.assign(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return true;
  }

  std::string step(unsigned char op, P& result, bool& stopped) {
    switch (op) {
      case 0x80:
        if (!need(1)) return bad("truncated PROTO");
        ++p_;
        return {};
      case 0x95:
        if (!need(8)) return bad("truncated FRAME");
        p_ += 8;
        return {};
      case 'c':
        return global();
      case 0x93:
        return stack_global();
      case 'q':
      case 'r':
      case 0x94:
        return memo_put(op);
      case 'h':
      case 'j':
        return memo_get(op);
      case '(':
        marks_.push_back(stack_.size());
        return {};
      case 't':
      case ')':
      case 0x85:
      case 0x86:
      case 0x87:
      case 'l':
      case ']':
        return sequence(op);
      case 'X':
      case 0x8c:
        return string(op);
      case 'K':
      case 'M':
      case 'J':
        return integer(op);
      case 0x8a:
        return long1();
      case 'G':
        if (!need(8)) return bad("truncated BINFLOAT");
        p_ += 8;
        stack_.push_back(make(PVal::Float));
        return {};
      case 0x88:
      case 0x89: {
        P v = make(PVal::Bool);
        v->i = op == 0x88;
        stack_.push_back(v);
        return {};
      }
      case 'N':
        stack_.push_back(make(PVal::None));
        return {};
      case '}':
        stack_.push_back(make(PVal::Dict));
        return {};
      case 'Q':
        return persistent_id();
      case 'R':
        return reduce();
      case 's':
      case 'a':
      case 'b':
      case 'u':
      case 'e':
        return add_items(op);
      case '.':
        if (stack_.size() != 1 || !marks_.empty()) return bad("STOP with " + std::to_string(stack_.size()) + " values");
        result = stack_.back();
        stopped = true;
        return {};
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        return bad(std::string("pickle opcode ") + hex + " that torch.save does not write for a tensor");
      }
    }
  }

  std::string global() {
    const auto nl1 = std::find(b_.begin() + static_cast<std::ptrdiff_t>(p_), b_.end(), '\n');
    if (nl1 == b_.end()) return bad("truncated GLOBAL");
    const auto nl2 = std::find(nl1 + 1, b_.end(), '\n');
    if (nl2 == b_.end()) return bad("truncated GLOBAL");
    P g = make(PVal::Global);
    g->s = std::string(b_.begin() + static_cast<std::ptrdiff_t>(p_), nl1) + "." + std::string(nl1 + 1, nl2);
    p_ = static_cast<std::size_t>(nl2 - b_.begin()) + 1;
    if (!libtorch_reads_global(g->s)) return unreadable(g->s);
    stack_.push_back(g);
    return {};
  }

  std::string stack_global() {
    P name = pop(), module = pop();
    if (!name || !module || name->kind != PVal::Str || module->kind != PVal::Str) return bad("STACK_GLOBAL");
    P g = make(PVal::Global);
    g->s = module->s + "." + name->s;
    if (!libtorch_reads_global(g->s)) return unreadable(g->s);
    stack_.push_back(g);
    return {};
  }

  std::string memo_put(unsigned char op) {
    std::uint64_t k = memo_.size();
    if (op == 'q') {
      if (!need(1)) return bad("truncated BINPUT");
      k = b_[p_];
      p_ += 1;
    }
    if (op == 'r') {
      if (!need(4)) return bad("truncated LONG_BINPUT");
      k = le(&b_[p_], 4);
      p_ += 4;
    }
    if (stack_.empty()) return bad("memo of an empty stack");
    memo_[k] = stack_.back();
    return {};
  }

  std::string memo_get(unsigned char op) {
    const int n = op == 'h' ? 1 : 4;
    if (!need(static_cast<std::size_t>(n))) return bad("truncated BINGET");
    auto it = memo_.find(le(&b_[p_], n));
    p_ += static_cast<std::size_t>(n);
    if (it == memo_.end()) return bad("BINGET of an unknown memo entry");
    stack_.push_back(it->second);
    return {};
  }

  std::string sequence(unsigned char op) {
    P t = make(op == 'l' || op == ']' ? PVal::List : PVal::Tuple);
    if (op == 't' || op == 'l') {
      if (!pop_mark(t->items)) return bad("TUPLE without MARK");
    } else if (op >= 0x85 && op <= 0x87) {
      for (int k = 0; k < op - 0x84; ++k) {
        P v = pop();
        if (!v) return bad("TUPLE of an empty stack");
        t->items.insert(t->items.begin(), v);
      }
    }
    stack_.push_back(t);
    return {};
  }

  std::string string(unsigned char op) {
    const int n = op == 'X' ? 4 : 1;
    if (!need(static_cast<std::size_t>(n))) return bad("truncated string");
    const std::uint64_t len = le(&b_[p_], n);
    p_ += static_cast<std::size_t>(n);
    if (len > b_.size() - p_) return bad("string past the end");
    P s = make(PVal::Str);
    s->s.assign(reinterpret_cast<const char*>(&b_[p_]), len);
    p_ += len;
    stack_.push_back(s);
    return {};
  }

  std::string integer(unsigned char op) {
    const int n = op == 'K' ? 1 : op == 'M' ? 2 : 4;
    if (!need(static_cast<std::size_t>(n))) return bad("truncated int");
    P v = make(PVal::Int);
    v->i = op == 'J' ? static_cast<std::int32_t>(le(&b_[p_], 4)) : static_cast<std::int64_t>(le(&b_[p_], n));
    p_ += static_cast<std::size_t>(n);
    stack_.push_back(v);
    return {};
  }

  std::string long1() {
    if (!need(1)) return bad("truncated LONG1");
    const std::size_t n = b_[p_++];
    if (n > 8 || !need(n)) return bad("LONG1 wider than 64 bits");
    P v = make(PVal::Int);
    std::uint64_t u = n ? le(&b_[p_], static_cast<int>(n)) : 0;
    if (n > 0 && n < 8 && (b_[p_ + n - 1] & 0x80)) u |= ~std::uint64_t{0} << (8 * n);  // sign-extend
    v->i = static_cast<std::int64_t>(u);
    p_ += n;
    stack_.push_back(v);
    return {};
  }

  std::string persistent_id() {
    P pid = pop();
    if (!pid) return bad("BINPERSID of an empty stack");
    P v = make(PVal::PersId);
    v->items.push_back(pid);
    stack_.push_back(v);
    return {};
  }

  std::string reduce() {
    P args = pop(), fn = pop();
    if (!args || !fn) return bad("REDUCE of an empty stack");
    P v = make(PVal::Reduced);
    v->items = {fn, args};
    stack_.push_back(v);
    return {};
  }

  // SETITEM(S) fill the dict below them; APPEND(S) and BUILD only pop what they would add, as the check reads no
  // list items or built state.
  std::string add_items(unsigned char op) {
    if (op == 's') {
      P value = pop(), key = pop();
      if (!value || !key || stack_.empty()) return bad("SETITEM");
      stack_.back()->entries.emplace_back(key, value);
      filled_.push_back(stack_.back());
      return {};
    }
    if (op == 'a' || op == 'b') {
      if (!pop() || stack_.empty()) return bad(op == 'a' ? "APPEND" : "BUILD");
      return {};
    }
    std::vector<P> items;
    if (!pop_mark(items) || stack_.empty()) return bad(op == 'u' ? "SETITEMS" : "APPENDS");
    if (op == 'u') {
      if (items.size() % 2 != 0) return bad("SETITEMS of an odd count");
      for (std::size_t k = 0; k + 1 < items.size(); k += 2) stack_.back()->entries.emplace_back(items[k], items[k + 1]);
      filled_.push_back(stack_.back());
    }
    return {};
  }

  const std::vector<unsigned char>& b_;
  std::vector<P>& filled_;
  std::size_t p_ = 0;
  std::vector<P> stack_;
  std::vector<std::size_t> marks_;
  std::map<std::uint64_t, P> memo_;
};

// `filled` collects the dicts SETITEM(S) filled: a crafted pickle can put a dict inside itself, and the caller
// empties them when done so no cycle of shared pointers outlives the check.
std::string unpickle(const std::vector<unsigned char>& b, P& result, std::vector<P>& filled) {
  return Unpickler(b, filled).run(result);
}

std::int64_t element_size_of(const std::string& storage) {
  static const std::map<std::string, std::int64_t> sizes{
      {"DoubleStorage", 8}, {"FloatStorage", 4},  {"HalfStorage", 2},         {"BFloat16Storage", 2},
      {"LongStorage", 8},   {"IntStorage", 4},    {"ShortStorage", 2},        {"CharStorage", 1},
      {"ByteStorage", 1},   {"BoolStorage", 1},   {"ComplexFloatStorage", 8}, {"ComplexDoubleStorage", 16}};
  auto it = sizes.find(storage);
  return it == sizes.end() ? 0 : it->second;
}

bool ints_of(const P& v, std::vector<std::int64_t>& out) {
  if (!v || v->kind != PVal::Tuple) return false;
  out.clear();
  for (const auto& x : v->items) {
    if (x->kind != PVal::Int) return false;
    out.push_back(x->i);
  }
  return true;
}

// The tensor record `t` (torch._utils._rebuild_tensor_v2, or a Parameter around one) checked against the archive.
std::string check_tensor_record(const P& t, const std::string& prefix, const std::map<std::string, ZipEntry>& entries,
                                PtTensor& out) {
  P top = t;
  if (top->kind == PVal::Reduced && top->items[0]->kind == PVal::Global &&
      top->items[0]->s == "torch._utils._rebuild_parameter" && top->items[1]->kind == PVal::Tuple &&
      !top->items[1]->items.empty())
    top = top->items[1]->items[0];
  if (top->kind != PVal::Reduced || top->items[0]->kind != PVal::Global ||
      top->items[0]->s != "torch._utils._rebuild_tensor_v2")
    return "holds a " + kind_name(*top) + ", not a single tensor";
  const P& args = top->items[1];
  if (args->kind != PVal::Tuple || args->items.size() < 4) return "holds a damaged tensor record (its arguments)";
  const P& storage = args->items[0];
  if (storage->kind != PVal::PersId || storage->items[0]->kind != PVal::Tuple ||
      storage->items[0]->items.size() < 5)
    return "holds a damaged tensor record (its storage)";
  const auto& pid = storage->items[0]->items;
  if (pid[0]->kind != PVal::Str || pid[0]->s != "storage" || pid[1]->kind != PVal::Global ||
      pid[2]->kind != PVal::Str || pid[4]->kind != PVal::Int)
    return "holds a damaged tensor record (its storage)";
  const std::string type = pid[1]->s.substr(pid[1]->s.rfind('.') + 1);
  out.storage_type = type;
  out.element_size = element_size_of(type);
  if (out.element_size == 0) return "holds a tensor of storage type " + pid[1]->s + ", which opcheck does not read";
  out.storage_elements = pid[4]->i;
  const std::string data_name = prefix + "data/" + pid[2]->s;
  auto data = entries.find(data_name);
  if (data == entries.end()) return "has no entry " + data_name + " for the tensor's storage";
  out.storage_bytes = static_cast<std::int64_t>(data->second.size);
  if (out.storage_elements < 0 || out.storage_elements > out.storage_bytes / out.element_size)
    return "records a storage of " + std::to_string(out.storage_elements) + " elements, but its entry " + data_name +
           " holds " + std::to_string(out.storage_bytes) + " bytes";
  if (args->items[1]->kind != PVal::Int || !ints_of(args->items[2], out.sizes) || !ints_of(args->items[3], out.strides))
    return "holds a damaged tensor record (offset, sizes or strides)";
  out.offset = args->items[1]->i;
  if (std::string problem = extent_problem(out.sizes, out.strides, out.offset,
                                           out.storage_elements * out.element_size, out.element_size);
      !problem.empty())
    return "holds a tensor whose " + problem;
  return {};
}

bool is_dict(const PVal& v) {
  return v.kind == PVal::Dict || (v.kind == PVal::Reduced && v.items[0]->kind == PVal::Global &&
                                  v.items[0]->s == "collections.OrderedDict");
}

std::string dict_keys(const PVal& d) {
  std::string out;
  std::size_t shown = 0;
  for (const auto& [k, v] : d.entries) {
    if (shown == 8) return out + ", ... (" + std::to_string(d.entries.size()) + " in all)";
    out += (shown++ ? ", " : "") + (k->kind == PVal::Str ? "'" + k->s.substr(0, 80) + "'" : kind_name(*k));
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::string extent_problem(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                           std::int64_t offset, std::int64_t storage_bytes, std::int64_t element_size) {
  if (sizes.size() != strides.size())
    return std::to_string(sizes.size()) + " sizes but " + std::to_string(strides.size()) + " strides";
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0) return "sizes " + shape_text(sizes) + " hold a negative size";
    if (strides[d] < 0) return "strides " + shape_text(strides) + " hold a negative stride";
  }
  if (offset < 0) return "storage offset " + std::to_string(offset) + " is negative";
  if (element_size <= 0) return "element size " + std::to_string(element_size) + " is not positive";
  const std::int64_t capacity = storage_bytes / element_size;
  const std::int64_t extent = storage_extent(sizes, strides, offset);
  if (extent < 0)
    return "sizes " + shape_text(sizes) + " with strides " + shape_text(strides) + " overflow a 64-bit index";
  if (extent > capacity)
    return "sizes " + shape_text(sizes) + " with strides " + shape_text(strides) + " and offset " +
           std::to_string(offset) + " reach element " + std::to_string(extent - 1) + " of a storage of " +
           std::to_string(capacity) + " elements";
  return {};
}

std::string check_pt_file(const std::string& path, PtTensor& out, const std::string& key, std::string* note) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "cannot be opened";
  const auto end = in.tellg();
  if (end <= 0) return "is empty";
  const auto file_size = static_cast<std::uint64_t>(end);
  unsigned char magic[4] = {0, 0, 0, 0};
  in.seekg(0);
  in.read(reinterpret_cast<char*>(magic), 4);
  if (magic[0] == 0x80 && magic[1] == 0x02)
    return "is in torch's legacy (pre-1.6) format, which libtorch cannot read";
  if (le(magic, 4) != 0x04034b50)
    return "is not a tensor file written by torch.save (it does not start as a zip archive)";
  std::map<std::string, ZipEntry> entries;
  if (std::string problem = read_zip(in, file_size, entries); !problem.empty()) return problem;

  std::string prefix;
  const ZipEntry* pickle = nullptr;
  for (const auto& [name, e] : entries) {
    const auto slash = name.find('/');
    if (slash != std::string::npos && name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      if (pickle) return "holds more than one data.pkl";
      prefix = name.substr(0, slash + 1);
      pickle = &e;
    }
  }
  if (!pickle) return "has no data.pkl record: not written by torch.save";
  if (pickle->method != 0) return "has a compressed data.pkl, which torch.save never writes";
  if (pickle->size > static_cast<std::uint64_t>(kMaxPickleBytes)) return "has a data.pkl too large for a single tensor";
  std::vector<unsigned char> bytes(pickle->size);
  in.clear();
  in.seekg(static_cast<std::streamoff>(pickle->data_offset));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
    return "cannot be read";
  P top;
  std::vector<P> filled;
  struct EmptyDicts {
    std::vector<P>& dicts;
    ~EmptyDicts() {
      for (auto& d : dicts) d->entries.clear();
    }
  } empty_dicts{filled};
  if (std::string problem = unpickle(bytes, top, filled); !problem.empty()) return problem;

  if (is_dict(*top) && top->kind == PVal::Reduced)  // libtorch's unpickler fails on a state_dict's OrderedDict
    return "holds an OrderedDict (a state_dict), which libtorch cannot read; save it as a plain dict: "
           "torch.save(dict(state_dict), path)";
  if (is_dict(*top)) {
    if (key.empty())
      return "holds a dict of " + std::to_string(top->entries.size()) +
             (top->entries.size() == 1 ? " entry (" : " entries (") + dict_keys(*top) +
             "), not a single tensor; name one with init_args.key";
    for (const auto& [k, v] : top->entries)
      if (k->kind == PVal::Str && k->s == key) {
        if (std::string problem = check_tensor_record(v, prefix, entries, out); !problem.empty())
          return problem.rfind("holds a ", 0) == 0 ? "entry '" + key + "' " + problem : problem;
        return {};
      }
    return "has no entry '" + key + "' (its keys: " + dict_keys(*top) + ")";
  }
  if (!key.empty() && note) *note = "holds a single tensor, not a dict: init_args.key '" + key + "' is not needed";
  return check_tensor_record(top, prefix, entries, out);
  return {};
}

}  // namespace opcheck
