/* Wine 8 (Debian 12) lacks bcryptprimitives.dll, whose ProcessPrng Rust's
 * standard library imports on Windows since Rust 1.78. This stand-in, built
 * with mingw-w64 into the test-only Wine prefix, forwards it to
 * BCryptGenRandom (Wine has that). Windows itself never sees this file. */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
        if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
