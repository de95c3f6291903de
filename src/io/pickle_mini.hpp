#pragma once
// The subset of Python's pickle (protocols 2-5) that PyTorch's state dicts use, read without
// executing anything: every global is checked against a whitelist and every REDUCE and
// persistent id is handed to the caller. Objects live in an arena owned by the reader, so
// containers that refer to each other (through the memo) cannot leak or recurse on destruction.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tapegrad/tensor.hpp"

namespace tg::io_detail {

struct PyObj {
    enum class Kind { None, Bool, Int, Float, String, Tuple, List, Dict, Global, Storage, Tensor };
    Kind kind = Kind::None;
    bool flag = false;  // Bool; for Dict: an OrderedDict
    int64_t integer = 0;
    double real = 0;
    std::string text;           // String; Global: "module.name"; Storage: its key
    std::vector<PyObj*> items;  // Tuple, List
    std::vector<std::pair<PyObj*, PyObj*>> entries;  // Dict, in insertion order
    std::map<std::string, size_t> index;             // Dict: key -> position in entries
    Dtype dtype = kFloat32;                          // Storage
    Tensor tensor;                                   // Storage (1-D, its elements), Tensor
};

const char* py_kind_name(PyObj::Kind k);

/// Reads one pickle from bytes[0, n). Throws io_error("<where>: pickle: ...") for an unknown or
/// truncated opcode, a stack or mark underflow, a memo miss, a global the whitelist refuses, or
/// anything left on the stack at STOP.
class PickleReader {
public:
    struct Hooks {
        std::function<bool(const std::string& module, const std::string& name)> allow_global;
        /// BINPERSID: the persistent id -> the object (a storage).
        std::function<PyObj*(PickleReader&, PyObj* pid)> persistent_load;
        /// REDUCE of an allowed global that is not collections.OrderedDict.
        std::function<PyObj*(PickleReader&, PyObj* callable, PyObj* args)> reduce;
    };
    PickleReader(const uint8_t* data, size_t n, std::string where, Hooks hooks)
        : p_(data), n_(n), where_(std::move(where)), hooks_(std::move(hooks)) {}
    PyObj* load();
    PyObj* make(PyObj::Kind k);
    [[noreturn]] void fail(const std::string& what) const;

private:
    const uint8_t* take(size_t k);
    uint64_t le(size_t k);
    PyObj* pop();
    std::vector<PyObj*> pop_mark();
    void set_item(PyObj* dict, PyObj* key, PyObj* value);
    PyObj* string(size_t len);
    const uint8_t* p_;
    size_t n_, pos_ = 0;
    std::string where_;
    Hooks hooks_;
    std::deque<PyObj> arena_;
    std::vector<PyObj*> stack_;
    std::vector<size_t> marks_;
    std::map<uint64_t, PyObj*> memo_;
};

/// Writes protocol 2 pickles as Python's pickler would for the same objects.
class PickleWriter {
public:
    PickleWriter() { out_ = {0x80, 2}; }
    void global(const std::string& module, const std::string& name);
    void integer(int64_t v);
    void boolean(bool v);
    void string(const std::string& s);
    void mark() { out_.push_back('('); }
    void op(char c) { out_.push_back(uint8_t(c)); }
    /// A tuple of the given ints.
    void int_tuple(const std::vector<int64_t>& v);
    std::vector<uint8_t>& bytes() { return out_; }

private:
    std::vector<uint8_t> out_;
};

}  // namespace tg::io_detail
