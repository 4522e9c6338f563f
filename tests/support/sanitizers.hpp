#pragma once

// Whether this test binary (and so the trace2d, trace2ctl and client it
// runs, built alike) is under AddressSanitizer, and how much slower that
// makes it. Tests of time and memory bounds scale or leave out what the
// sanitizer's own shadow, quarantine and redzones cost: those are not
// trace2d's.

namespace trace2d::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool k_sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool k_sanitized = true;
#else
inline constexpr bool k_sanitized = false;
#endif
#else
inline constexpr bool k_sanitized = false;
#endif

// ASan/UBSan make everything about this much slower.
inline constexpr int k_slow = k_sanitized ? 4 : 1;

// Room added to memory bounds under AddressSanitizer: freed memory sits in
// a quarantine of up to 256 MiB and every allocation grows redzones.
inline constexpr long k_sanitizer_kib = k_sanitized ? 512 * 1024 : 0;

}  // namespace trace2d::test
