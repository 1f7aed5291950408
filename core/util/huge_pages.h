// Transparent huge pages for glibc's heap, for the programs that run models.
#pragma once

namespace ramiel {

// Starts the program once more (execv of /proc/self/exe with `argv`) with
// glibc.malloc.hugetlb=1 in GLIBC_TUNABLES, under which glibc madvises its heap
// MADV_HUGEPAGE as it grows: activations and packed weights live there, a run
// touches tens of megabytes of them, and with 4 KiB pages the TLB misses
// showed (googlenet on two threads 8.7-9.1 -> 8.2-8.5 ms, mobilenet_v2
// 2.9-3.1 -> 2.7-2.8; docs/runtime.md, Huge pages). glibc reads its tunables only when a
// process starts, hence the restart. A GLIBC_TUNABLES of the user's own is kept,
// the setting added to it; returns (doing nothing) where it names
// glibc.malloc.hugetlb already, or where the restart fails. Call it first thing
// in main(), before any thread starts.
void restartWithHugePages(char** argv);

}  // namespace ramiel
