#pragma once

namespace rulestream {

// Whole-file compression TensorFlow's TFRecord reader understands (an event file's, and what the
// job simulator writes).
enum class Compression { None, Zlib, Gzip };

}  // namespace rulestream
