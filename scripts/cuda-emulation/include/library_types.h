// Stand-in for the CUDA toolkit's library_types.h in the CPU emulation: the element types s3's
// cuBLASLt calls name, with the toolkit's values (library_types.h of CUDA 13.0).
#pragma once

typedef enum cudaDataType_t { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14, CUDA_R_8F_E4M3 = 28 } cudaDataType;
