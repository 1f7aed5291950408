// Transparent huge pages for glibc's heap, for the programs that run models.
#pragma once

namespace ramiel {

// Starts the program once more (execv of /proc/self/exe with `argv`) with
// GLIBC_TUNABLES=glibc.malloc.hugetlb=1, under which glibc madvises its heap
// MADV_HUGEPAGE as it grows: activations and packed weights live there, a run
// touches tens of megabytes of them, and with 4 KiB pages the TLB misses
// showed (googlenet on two threads 8.7-9.1 -> 8.2-8.5 ms, mobilenet_v2
// 2.9-3.1 -> 2.7-2.8; docs/runtime.md, Huge pages). glibc reads its tunables only when a
// process starts, hence the restart. Returns (doing nothing) where the user
// has set GLIBC_TUNABLES at all, or where the restart fails. Call it first
// thing in main(), before any thread starts.
void restartWithHugePages(char** argv);

}  // namespace ramiel
