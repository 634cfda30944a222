#include "base/log.h"
#include "base/buf.h"

#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static enum kp_log_level current_level = KP_LOG_INFO;
static FILE *current_output;
/* Set once at start-up (kp_log_set_outputs), before any thread logs. */
static FILE *outputs[KP_LOG_MAX_OUTPUTS];
static size_t n_outputs;
static FILE *error_output;

static const char *const level_names[] = {"DEBUG", "INFO", "WARN", "ERROR"};

void kp_log_set_level(enum kp_log_level level)
{
    current_level = level;
}

int kp_log_level_parse(const char *name)
{
    static const char *const names[] = {"debug", "info", "warn", "error", "off"};
    for (int i = 0; i < 5; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    return -1;
}

void kp_log_set_output(FILE *out)
{
    current_output = out;
    n_outputs = 0;
}

void kp_log_set_outputs(FILE *const *outs, size_t n, FILE *errors)
{
    n_outputs = n < KP_LOG_MAX_OUTPUTS ? n : KP_LOG_MAX_OUTPUTS;
    for (size_t i = 0; i < n_outputs; i++)
        outputs[i] = outs[i];
    error_output = errors;
}

/* A line that could not be written is reported where errors go (zap's
 * ErrorOutputPaths), once per failing write. */
static void put_line(FILE *out, const char *text, size_t len)
{
    if (fwrite(text, 1, len, out) == len && fflush(out) == 0)
        return;
    clearerr(out);
    FILE *err = error_output ? error_output : stderr;
    if (err != out) {
        fputs("{\"level\":\"ERROR\",\"logger\":\"log\",\"message\":\"could not write a log line\"}\n", err);
        fflush(err);
    }
}

bool kp_log_enabled(enum kp_log_level level)
{
    return level >= current_level && level < KP_LOG_OFF;
}

static void put_time(kp_buf *line)
{
    struct timespec ts;
    struct tm tm;
    char stamp[32];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    kp_buf_printf(line, "%s.%03ldZ", stamp, ts.tv_nsec / 1000000);
}

void kp_log_write(enum kp_log_level level, const char *logger, const char *message, ...)
{
    kp_buf line = KP_BUF_INIT(64 * 1024);
    va_list ap;

    kp_buf_printf(&line, "{\"level\":\"%s\",\"time\":\"", level_names[level]);
    put_time(&line);
    kp_buf_puts(&line, "\",\"logger\":");
    kp_buf_json_string(&line, logger ? logger : "");
    kp_buf_puts(&line, ",\"message\":");
    kp_buf_json_string(&line, message ? message : "");
    va_start(ap, message);
    for (;;) {
        const char *key = va_arg(ap, const char *);
        if (!key)
            break;
        const char *value = va_arg(ap, const char *);
        kp_buf_putc(&line, ',');
        kp_buf_json_string(&line, key);
        kp_buf_putc(&line, ':');
        kp_buf_json_string(&line, value ? value : "");
    }
    va_end(ap);
    kp_buf_puts(&line, "}\n");
    if (n_outputs) {
        for (size_t i = 0; i < n_outputs; i++)
            put_line(outputs[i], kp_buf_cstr(&line), line.len);
    } else {
        put_line(current_output ? current_output : stderr, kp_buf_cstr(&line), line.len);
    }
    kp_buf_free(&line);
}
