# Fallback build for machines without cmake: the CPU-only addon, from the same source list as
# CMakeLists.txt (native/sources.json). node-gyp cannot set flags per file, so the AVX2, AVX-512,
# AVX-512 BF16 and AMX sources are static libraries of their own.
{
  "target_defaults": {
    "include_dirs": ["native", "<!(node -p \"require('node-addon-api').include_dir\")"],
    "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_CPP_EXCEPTIONS"],
    "cflags!": ["-fno-exceptions", "-fno-rtti"],
    "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
    "cflags_cc": ["-std=c++17", "-fexceptions", "-O3", "-Wall", "-Wextra", "-Wno-unused-parameter"]
  },
  "targets": [
    {
      "target_name": "s3_simd_avx2",
      "type": "static_library",
      "sources": ["<!@(node -p \"require('./native/sources.json').cpu_avx2.join(' ')\")"],
      "cflags_cc": ["-mavx2", "-mfma", "-mf16c"]
    },
    {
      "target_name": "s3_simd_avx512",
      "type": "static_library",
      "sources": ["<!@(node -p \"require('./native/sources.json').cpu_avx512.join(' ')\")"],
      "cflags_cc": ["-mavx2", "-mfma", "-mf16c", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-Wno-maybe-uninitialized", "-Wno-uninitialized"]
    },
    {
      "target_name": "s3_simd_avx512bf16",
      "type": "static_library",
      "sources": ["<!@(node -p \"require('./native/sources.json').cpu_avx512bf16.join(' ')\")"],
      "cflags_cc": ["-mavx2", "-mfma", "-mf16c", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx512bf16", "-Wno-maybe-uninitialized", "-Wno-uninitialized"]
    },
    {
      "target_name": "s3_simd_amx",
      "type": "static_library",
      "sources": ["<!@(node -p \"require('./native/sources.json').cpu_amx.join(' ')\")"],
      "cflags_cc": ["-mavx2", "-mfma", "-mf16c", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx512bf16", "-mamx-tile", "-mamx-bf16", "-Wno-maybe-uninitialized", "-Wno-uninitialized"]
    },
    {
      "target_name": "s3_native",
      "dependencies": ["s3_simd_avx2", "s3_simd_avx512", "s3_simd_avx512bf16", "s3_simd_amx"],
      "defines": ["S3_BUILD_SYSTEM=\"node-gyp\""],
      "sources": [
        "<!@(node -p \"require('./native/sources.json').core.join(' ')\")",
        "<!@(node -p \"require('./native/sources.json').model.join(' ')\")",
        "<!@(node -p \"require('./native/sources.json').engine.join(' ')\")",
        "<!@(node -p \"require('./native/sources.json').train.join(' ')\")",
        "<!@(node -p \"require('./native/sources.json').bench.join(' ')\")",
        "<!@(node -p \"require('./native/sources.json').cpu.join(' ')\")",
        "<!@(node -p \"require('./native/sources.json').napi.join(' ')\")"
      ],
      "libraries": ["-ldl", "-lpthread"]
    }
  ]
}
