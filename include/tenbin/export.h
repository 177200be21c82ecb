/*
 * tenbin/export.h - symbol visibility.  The library is built with
 * -fvisibility=hidden; only declarations marked TB_API are exported.
 */
#ifndef TENBIN_EXPORT_H
#define TENBIN_EXPORT_H

#if defined(TENBIN_STATIC)
#define TB_API
#elif defined(__GNUC__) || defined(__clang__)
#define TB_API __attribute__((visibility("default")))
#else
#define TB_API
#endif

#endif /* TENBIN_EXPORT_H */
