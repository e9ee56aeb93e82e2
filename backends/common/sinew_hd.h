/* SINEW_HD marks small math functions that must compile for both the host and a CUDA device.
 * SPDX-License-Identifier: MIT
 *
 * Under nvcc it expands to __host__ __device__; in plain C it expands to nothing. Headers that
 * use it stay within the common subset of C11 and C++ (no compound literals, no designated
 * initialisers, no restrict) and call only math functions that CUDA also has (sqrtf, fabsf). */
#ifndef SINEW_HD
#  ifdef __CUDACC__
#    define SINEW_HD __host__ __device__
#  else
#    define SINEW_HD
#  endif
#endif
