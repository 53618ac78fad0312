/* The decision's round trip to a bot process in one call: the request
 * written, the wait for its reply, the reply read and stamped.
 *
 * Optional: ``arena.process.transport`` uses it when it was built (``setup.py``:
 * an optional extension) and falls back to the same steps in Python else, or
 * with ARENA_PURE_PYTHON=1.  It does only the usual case, and hands anything
 * else back to the Python path untouched (see ``exchange``): the write that
 * the pipe did not take whole, a wait that ends with anything but stdout
 * readable (a timeout, the bot's exit, its stderr, a signal), a read of
 * more or less than one whole non-blank line.  It never consumes what it does
 * not return, and the stamps are the Python path's: CLOCK_MONOTONIC as
 * ``time.monotonic()`` gives it, taken at the same points.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (64 * 1024)   /* as arena.process.stderr.CHUNK */
#define MAX_FDS 4

/* time.monotonic() as CPython computes it: nanoseconds, then seconds. */
static double
monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    if (ns % 1000000000LL == 0) {
        return (double)(ns / 1000000000LL);
    }
    return (double)ns / 1e9;
}

/* An int argument (PyLong_AsInt is public from Python 3.13 only). */
static int
as_int(PyObject *obj)
{
    long value = PyLong_AsLong(obj);
    if (value < INT_MIN || value > INT_MAX) {
        PyErr_SetString(PyExc_OverflowError, "file descriptor out of range");
        return -1;
    }
    return (int)value;
}

static int
is_blank(const char *p, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = p[i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\x0b' && c != '\x0c') {
            return 0;
        }
    }
    return 1;
}

/* Results: (written, t_sent, kind, payload, stamp).
 * written: bytes of ``data`` written (-1: the pipe is broken, the bot's stdin closed);
 * kind 0: nothing read (payload None);
 * kind 1: one whole non-blank line, payload without its newline;
 * kind 2: a chunk as read (b"": end of file), for the reader's splitter;
 * kind 3: something was waiting before the write: nothing written, nothing read. */
static PyObject *
result(Py_ssize_t written, double t_sent, int kind, PyObject *payload, double stamp)
{
    /* Steals ``payload`` (NULL: None).  Built by hand: Py_BuildValue's
     * format parsing cost more than the rest of this function. */
    PyObject *out = PyTuple_New(5);
    PyObject *items[4] = {PyLong_FromSsize_t(written), PyFloat_FromDouble(t_sent),
                          PyLong_FromLong(kind), PyFloat_FromDouble(stamp)};
    if (payload == NULL) {
        payload = Py_NewRef(Py_None);
    }
    if (out == NULL || !items[0] || !items[1] || !items[2] || !items[3]) {
        Py_XDECREF(out);
        for (int i = 0; i < 4; i++) {
            Py_XDECREF(items[i]);
        }
        Py_DECREF(payload);
        return NULL;
    }
    PyTuple_SET_ITEM(out, 0, items[0]);
    PyTuple_SET_ITEM(out, 1, items[1]);
    PyTuple_SET_ITEM(out, 2, items[2]);
    PyTuple_SET_ITEM(out, 3, payload);
    PyTuple_SET_ITEM(out, 4, items[3]);
    return out;
}

PyDoc_STRVAR(exchange_doc,
"exchange(wfd, data, fds, deadline, max_line, slice) -> (written, t_sent, kind, payload, stamp)\n\n"
"If nothing is waiting on ``fds``, write ``data`` to ``wfd`` (non-blocking),\n"
"then wait until ``deadline``\n"
"(monotonic seconds; at most ``slice`` seconds if ``slice`` > 0) for\n"
"``fds[0]`` (the bot's stdout, non-blocking) to be\n"
"readable, and read it once.  ``fds[1:]``: the other fds the Python path polls\n"
"(a pidfd, stderr): any of them ready ends the wait with nothing read.\n"
"A line longer than ``max_line`` bytes is returned as a chunk (kind 2).");

static PyObject *
exchange(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    /* Arguments read by hand (METH_FASTCALL): PyArg_ParseTuple's format
     * parsing cost a quarter of the call. */
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "exchange() takes 6 arguments");
        return NULL;
    }
    if (!PyBytes_Check(args[1]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "exchange(): data must be bytes, fds a tuple");
        return NULL;
    }
    int wfd = as_int(args[0]);
    double deadline = PyFloat_AsDouble(args[3]);
    Py_ssize_t max_line = PyLong_AsSsize_t(args[4]);
    double slice = PyFloat_AsDouble(args[5]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    PyObject *fds_obj = args[2];
    struct pollfd fds[MAX_FDS];
    Py_ssize_t nfds = PyTuple_GET_SIZE(fds_obj);
    if (nfds < 1 || nfds > MAX_FDS) {
        PyErr_SetString(PyExc_ValueError, "fds: 1 to 4 file descriptors");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nfds; i++) {
        int fd = as_int(PyTuple_GET_ITEM(fds_obj, i));
        if (fd == -1 && PyErr_Occurred()) {
            return NULL;
        }
        fds[i].fd = fd;
        fds[i].events = POLLIN | POLLHUP | POLLERR;
        fds[i].revents = 0;
    }

    /* Anything waiting (a line nobody asked for, stderr, the exit): nothing
     * written, the Python path throws it away first. */
    if (poll(fds, (nfds_t)nfds, 0) != 0) {
        return result(0, 0.0, 3, NULL, 0.0);
    }
    Py_ssize_t size = PyBytes_GET_SIZE(args[1]);
    Py_ssize_t written = write(wfd, PyBytes_AS_STRING(args[1]), (size_t)size);
    int err = errno;
    if (written < 0) {
        if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) {
            written = 0;
        } else if (err == EPIPE) {
            return result(-1, monotonic_now(), 0, NULL, 0.0);
        } else {
            errno = err;
            return PyErr_SetFromErrno(PyExc_OSError);
        }
    }
    double t_sent = monotonic_now();
    if (written < size) {
        return result(written, t_sent, 0, NULL, 0.0);
    }

    double remaining = deadline - monotonic_now();
    if (remaining <= 0) {
        return result(written, t_sent, 0, NULL, 0.0);
    }
    if (slice > 0 && remaining > slice) {
        remaining = slice;
    }
    /* poll() rounds a fraction of a millisecond up, as select.poll does. */
    double ms = ceil(remaining * 1000.0);
    int timeout = ms > INT_MAX ? INT_MAX : (int)ms;
    int ready;
    Py_BEGIN_ALLOW_THREADS
    ready = poll(fds, (nfds_t)nfds, timeout);
    err = errno;
    Py_END_ALLOW_THREADS
    if (ready < 0) {
        if (err == EINTR && PyErr_CheckSignals() < 0) {
            return NULL;            /* Ctrl-C: as select.poll would raise it */
        }
        return result(written, t_sent, 0, NULL, 0.0);
    }
    if (ready != 1 || fds[0].revents == 0) {
        return result(written, t_sent, 0, NULL, 0.0);   /* a timeout, an exit, stderr */
    }

    /* The GIL is held again: one buffer serves every thread. */
    static char buf[CHUNK];
    Py_ssize_t got = read(fds[0].fd, buf, CHUNK);
    double stamp = monotonic_now();
    if (got < 0) {
        return result(written, t_sent, 0, NULL, 0.0);   /* the Python path reads again, judges the error */
    }
    const char *nl = got > 0 ? memchr(buf, '\n', (size_t)got) : NULL;
    /* A whole chunk may have more behind it: the Python reader takes it. */
    int line = got < CHUNK && nl != NULL && nl - buf == got - 1 && got - 1 <= max_line
               && !is_blank(buf, got - 1);
    PyObject *payload = PyBytes_FromStringAndSize(buf, line ? got - 1 : got);
    if (payload == NULL) {
        return NULL;
    }
    return result(written, t_sent, line ? 1 : 2, payload, stamp);
}

static PyMethodDef methods[] = {
    {"exchange", (PyCFunction)(void (*)(void))exchange, METH_FASTCALL, exchange_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastpipe",
    "One decision's write, wait and read in C (see arena.process.transport).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__fastpipe(void)
{
    return PyModule_Create(&module);
}
