// Stand-in for cuda_fp16.h in the CPU emulation (only sm_89+ branches use it; they are not compiled).
#pragma once
#include "cuda_runtime.h"
