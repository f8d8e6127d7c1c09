#include "python/src/numpy_values.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/model/shared_bytes.hpp"

namespace rulestream::python {
namespace {

namespace npy = py::detail;

// numpy's NPY_HALF (part of its stable C API), which pybind11 2.10 does not name.
constexpr int kNumpyHalf = 23;

// numpy's type number for a dtype whose bytes numpy can take as they are; -1 for the others.
int numpy_type_number(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return kNumpyHalf;
    case DType::Float32:
      return npy::npy_api::NPY_FLOAT_;
    case DType::Float64:
      return npy::npy_api::NPY_DOUBLE_;
    case DType::Int8:
      return npy::npy_api::NPY_INT8_;
    case DType::Int16:
      return npy::npy_api::NPY_INT16_;
    case DType::Int32:
      return npy::npy_api::NPY_INT32_;
    case DType::Int64:
      return npy::npy_api::NPY_INT64_;
    case DType::UInt8:
      return npy::npy_api::NPY_UINT8_;
    case DType::UInt16:
      return npy::npy_api::NPY_UINT16_;
    case DType::UInt32:
      return npy::npy_api::NPY_UINT32_;
    case DType::UInt64:
      return npy::npy_api::NPY_UINT64_;
    case DType::Bool:
      return npy::npy_api::NPY_BOOL_;
    case DType::Complex64:
      return npy::npy_api::NPY_CFLOAT_;
    case DType::Complex128:
      return npy::npy_api::NPY_CDOUBLE_;
    default:
      return -1;
  }
}

// A new array of `type_number` over `data` (nullptr: numpy allocates), C order, owning a
// reference to `base` when one is given. Through numpy's C API directly: py::array's
// constructor builds a dtype object and checks strides on every call, a third of the time of a
// small value.
py::object new_array(int type_number, const Shape& shape, void* data, py::handle base,
                     bool writeable) {
  auto& api = npy::npy_api::get();
  // numpy allows at most 32 dimensions (NPY_MAXDIMS); on the stack, as values are many.
  constexpr std::size_t kMaxDims = 32;
  if (shape.size() > kMaxDims) {
    throw py::value_error("a value of " + std::to_string(shape.size()) +
                          " dimensions has no numpy equivalent (at most 32)");
  }
  std::array<Py_intptr_t, kMaxDims> dims{};
  std::copy(shape.begin(), shape.end(), dims.begin());
  PyObject* descr = api.PyArray_DescrFromType_(type_number);
  if (descr == nullptr) throw py::error_already_set();
  // For memory numpy allocates, a non-zero flag would ask for Fortran order; for memory it is
  // given, the flags describe it.
  int flags = 0;
  if (data != nullptr) {
    flags = npy::npy_api::NPY_ARRAY_C_CONTIGUOUS_;
    if (writeable) flags |= npy::npy_api::NPY_ARRAY_WRITEABLE_;
  }
  // PyArray_NewFromDescr steals `descr`, also when it fails.
  auto array = py::reinterpret_steal<py::object>(
      api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, static_cast<int>(shape.size()),
                                dims.data(), nullptr, data, flags, nullptr));
  if (!array) throw py::error_already_set();
  if (base) {
    // PyArray_SetBaseObject steals the reference, also when it fails.
    if (api.PyArray_SetBaseObject_(array.ptr(), base.inc_ref().ptr()) != 0) {
      throw py::error_already_set();
    }
  }
  return array;
}

// The base of a zero-copy array: a small Python object holding a copy of the SharedBytes in
// place, which keeps the bytes' owner (the mapping) alive as long as the array. A PyCapsule
// around a heap copy, used before, cost a malloc and a free, and the capsule's context and
// name look-ups, on every value (benchmarks/RESULTS.md, python_e2e).
struct HeldBytes {
  PyObject ob_base;  // PyObject_HEAD, spelt out: clang-format takes the macro for a type
  SharedBytes bytes;
};

void free_held_bytes(PyObject* self) {
  std::destroy_at(&reinterpret_cast<HeldBytes*>(self)->bytes);
  PyObject_Free(self);
}

// A static type: made ready once (under the GIL, as every caller holds it), never freed, as
// arrays may outlive the module's state. It holds no Python object, so the garbage collector
// need not know it.
PyTypeObject& held_bytes_type() {
  static PyTypeObject* const type = [] {
    static PyTypeObject made = {PyVarObject_HEAD_INIT(nullptr, 0)};
    made.tp_name = "rulestream._HeldBytes";
    made.tp_doc = "The bytes a read-only numpy array views: part of a mapped event file.";
    made.tp_basicsize = sizeof(HeldBytes);
    made.tp_flags = Py_TPFLAGS_DEFAULT;
    made.tp_dealloc = free_held_bytes;
    if (PyType_Ready(&made) != 0) throw py::error_already_set();
    return &made;
  }();
  return *type;
}

py::object keep_alive(const SharedBytes& bytes) {
  HeldBytes* held = PyObject_New(HeldBytes, &held_bytes_type());
  if (held == nullptr) throw py::error_already_set();
  std::construct_at(&held->bytes, bytes);
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(held));
}

py::object copied_array(int type_number, const TensorValue& value) {
  py::object array = new_array(type_number, value.shape(), nullptr, py::handle(), true);
  auto* target = npy::array_proxy(array.ptr())->data;
  if (!value.bytes().empty()) std::memcpy(target, value.bytes().data(), value.bytes().size());
  return array;
}

py::object strings_array(const TensorValue& value) {
  py::list items;
  for (const std::string& text : value.strings()) {
    // smdebug decodes string tensors as UTF-8 text; bytes that are not become surrogates, as
    // Python's 'surrogateescape' keeps them, rather than failing the whole value.
    items.append(py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
        text.data(), static_cast<Py_ssize_t>(text.size()), "surrogateescape")));
  }
  py::tuple shape(value.shape().size());
  for (std::size_t i = 0; i < value.shape().size(); ++i) shape[i] = py::int_(value.shape()[i]);
  py::object array = py::module_::import("numpy").attr("array")(items);
  return array.attr("reshape")(shape);
}

py::object bfloat16_as_float32(const TensorValue& value) {
  py::object array =
      new_array(npy::npy_api::NPY_FLOAT_, value.shape(), nullptr, py::handle(), true);
  auto* target = reinterpret_cast<float*>(npy::array_proxy(array.ptr())->data);
  for (std::int64_t i = 0; i < value.size(); ++i) {
    target[i] = static_cast<float>(value.as_double(i));
  }
  return array;
}

// numpy's scalar types (numpy.float32, ...), by dtype, looked up once.
py::handle scalar_type(DType dtype) {
  static const auto types = [] {
    std::vector<PyObject*> found(static_cast<std::size_t>(DType::Complex128) + 1, nullptr);
    const py::module_ numpy = py::module_::import("numpy");
    const auto set = [&](DType d, const char* name) {
      found[static_cast<std::size_t>(d)] = py::object(numpy.attr(name)).release().ptr();
    };
    set(DType::Float16, "float16");
    set(DType::BFloat16, "float32");
    set(DType::Float32, "float32");
    set(DType::Float64, "float64");
    set(DType::Int8, "int8");
    set(DType::Int16, "int16");
    set(DType::Int32, "int32");
    set(DType::Int64, "int64");
    set(DType::UInt8, "uint8");
    set(DType::UInt16, "uint16");
    set(DType::UInt32, "uint32");
    set(DType::UInt64, "uint64");
    set(DType::Bool, "bool_");
    return found;
  }();
  const auto index = static_cast<std::size_t>(dtype);
  if (index >= types.size() || types[index] == nullptr) {
    throw py::type_error("no numpy scalar type for dtype " + std::string(dtype_name(dtype)));
  }
  return types[index];
}

}  // namespace

py::object to_numpy(const TensorValue& value) {
  if (value.is_string()) return strings_array(value);
  if (value.dtype() == DType::BFloat16) return bfloat16_as_float32(value);
  const int type_number = numpy_type_number(value.dtype());
  if (type_number < 0) {
    throw py::type_error("a value of dtype " + std::string(dtype_name(value.dtype())) +
                         " has no numpy equivalent");
  }
  const SharedBytes& bytes = value.bytes();
  if (!bytes.in_kept_mapping() || bytes.empty()) return copied_array(type_number, value);
  // numpy never writes through a read-only array, so the const can go.
  void* data = const_cast<std::byte*>(bytes.data());
  return new_array(type_number, value.shape(), data, keep_alive(bytes), false);
}

py::object to_numpy_scalar(const Scalar& scalar, bool as_array) {
  const py::handle type = scalar_type(scalar.dtype());
  const DType dtype = scalar.dtype();
  py::object number;
  if (is_floating(dtype)) {
    number = type(scalar.as_double());
  } else if (dtype == DType::Bool) {
    number = type(scalar.as_uint() != 0);
  } else if (is_signed_integer(dtype)) {
    number = type(scalar.as_int());
  } else {
    number = type(scalar.as_uint());
  }
  if (!as_array) return number;
  // Never released: see python_side.cpp.
  static const py::handle asarray =
      py::object(py::module_::import("numpy").attr("asarray")).release();
  return asarray(number);
}

}  // namespace rulestream::python
