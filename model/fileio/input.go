package fileio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/jeirt/jeirt/model/machine"
)

// Inputs: every file a run reads is opened once, by OpenInput, and read
// through one buffered reader, so that format detection peeks instead of
// opening the file again and pipes (/dev/stdin, a shell's <(cmd)) read like
// files. A folder, a device (/dev/zero) or a socket is refused when it is
// opened; a FIFO waits for its writer only as long as the run is not
// cancelled; a regular file that grows, shrinks or changes while it is read
// is refused (growth as it happens, the rest at its end); and every
// read stops when the run is cancelled (SIGINT, SIGTERM).

// MaxDocumentBytes is the largest JSON or YAML document jeirt reads (a
// config, a manifest, fit.json, tokenizer.json, an upstreams file).
const MaxDocumentBytes = 256 << 20

// inputCtx is the context whose cancellation stops this process's reads
// (SetInputContext).
var inputCtx = struct {
	sync.Mutex
	ctx context.Context
}{ctx: context.Background()}

// SetInputContext sets the context that every input read from now on
// honours: when it is cancelled, a read blocked on a pipe or a FIFO without
// a writer returns its error. The command line sets it to the command's
// context (cancelled by SIGINT and SIGTERM) before each command runs, and
// calls restore, which sets the context there was before, when it ends.
func SetInputContext(ctx context.Context) (restore func()) {
	if ctx == nil {
		ctx = context.Background()
	}
	inputCtx.Lock()
	prev := inputCtx.ctx
	inputCtx.ctx = ctx
	inputCtx.Unlock()
	return func() {
		inputCtx.Lock()
		inputCtx.ctx = prev
		inputCtx.Unlock()
	}
}

func inputContext() context.Context {
	inputCtx.Lock()
	defer inputCtx.Unlock()
	return inputCtx.ctx
}

// Input is one file a run reads, opened by OpenInput. Read it through the
// embedded buffered reader (Peek to detect a format: it never consumes).
type Input struct {
	*bufio.Reader
	Path string
	// File is the open file: a reader at offsets for a regular file (Parquet,
	// safetensors), the pipe otherwise.
	File *os.File
	// Regular is true for a regular file, whose Size is its size when it was
	// opened; a pipe or FIFO has Size -1.
	Regular bool
	Size    int64
	ModTime time.Time // when the file was last modified, as it was opened
	src     *inputReader
}

// OpenInput opens the file at path for reading (see Input). The caller
// closes it.
func OpenInput(path string) (*Input, error) {
	ctx := inputContext()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		if pe, ok := err.(*fs.PathError); ok {
			pe.Op = "open"
		}
		return nil, err
	}
	if err := inputKind(path, fi); err != nil {
		return nil, err
	}
	var f *os.File
	if fi.Mode()&fs.ModeNamedPipe != 0 {
		f, err = openFIFO(ctx, path)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, err
	}
	// What was opened, not what the name said a moment before.
	if fi, err = f.Stat(); err == nil {
		err = inputKind(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	in := &Input{Path: path, File: f, Regular: fi.Mode().IsRegular(), Size: -1, ModTime: fi.ModTime()}
	if in.Regular {
		in.Size = fi.Size()
	}
	in.src = &inputReader{in: in, ctx: ctx}
	if !in.Regular {
		// A blocked read of a pipe returns when the run is cancelled.
		in.src.stop = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	}
	in.Reader = bufio.NewReaderSize(in.src, 1<<20)
	return in, nil
}

// inputKind refuses what is not a file to read.
func inputKind(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsDir():
		return fmt.Errorf("%s is a folder, not a file", path)
	case m&fs.ModeDevice != 0:
		return fmt.Errorf("%s is a device, not a file: jeirt reads regular files and pipes", path)
	case m&fs.ModeSocket != 0:
		return fmt.Errorf("%s is a socket, not a file: jeirt reads regular files and pipes", path)
	case m&fs.ModeIrregular != 0:
		return fmt.Errorf("%s is not a regular file", path)
	}
	return nil
}

// openFIFO opens a FIFO, which blocks until a writer opens it; ctx's
// cancellation ends the wait.
func openFIFO(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
		// Be the writer for a moment, so that the open returns and the
		// goroutine ends before this does; what it opened is closed unread.
		// A reader left waiting would take the next writer's data (the
		// FIFO's next reader then waits for a writer that has gone), so
		// the writer's open is tried until the goroutine has opened (it
		// fails while no reader waits yet), for at most a second.
		stop := time.Now().Add(time.Second)
		for {
			if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			select {
			case o := <-done:
				if o.f != nil {
					o.f.Close()
				}
				return nil, fmt.Errorf("%s: a FIFO with no writer: %w", path, ctx.Err())
			case <-time.After(time.Millisecond):
			}
			if time.Now().After(stop) {
				go func() {
					if o := <-done; o.f != nil {
						o.f.Close()
					}
				}()
				return nil, fmt.Errorf("%s: a FIFO with no writer: %w", path, ctx.Err())
			}
		}
	}
}

// Limit makes reading more than n bytes of the file an error that names
// what (for example "a config").
func (in *Input) Limit(n int64, what string) { in.src.limit, in.src.what = n, what }

// Hash sends every byte read from the file, in order, to h as well.
func (in *Input) Hash(h io.Writer) { in.src.hash = h }

// Drain reads what is left of the file (into the Hash).
func (in *Input) Drain() error {
	_, err := io.Copy(io.Discard, in.Reader)
	return err
}

// Rewind starts reading a regular file again from its first byte.
func (in *Input) Rewind() error {
	if !in.Regular {
		return fmt.Errorf("%s: a pipe cannot be read twice", in.Path)
	}
	if _, err := in.File.Seek(0, io.SeekStart); err != nil {
		return err
	}
	in.src.n = 0
	in.Reader.Reset(in.src)
	return nil
}

// Close closes the file.
func (in *Input) Close() error {
	if in.src.stop != nil {
		in.src.stop()
	}
	return in.File.Close()
}

// inputReader is the file under Input's buffer: it checks the run's
// context on every read, counts the bytes and refuses a regular file that
// grows, shrinks or changes (atEnd), or any file past its limit.
type inputReader struct {
	in    *Input
	ctx   context.Context
	stop  func() bool
	n     int64
	limit int64
	what  string
	hash  io.Writer
}

func (r *inputReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, fmt.Errorf("reading %s: %w", r.in.Path, err)
	}
	n, err := r.in.File.Read(p)
	if err != nil && r.ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return n, fmt.Errorf("reading %s: %w", r.in.Path, r.ctx.Err())
	}
	r.n += int64(n)
	if r.in.Regular && r.n > r.in.Size {
		return n, fmt.Errorf("%s grew while it was read (it had %d bytes when opened): read it once it is complete", r.in.Path, r.in.Size)
	}
	if r.limit > 0 && r.n > r.limit {
		return n, fmt.Errorf("%s is larger than %s, the most jeirt reads of %s", r.in.Path, machine.Bytes(r.limit), r.what)
	}
	if r.hash != nil && n > 0 {
		r.hash.Write(p[:n])
	}
	if err == io.EOF && r.in.Regular {
		if e := r.atEnd(); e != nil {
			return n, e
		}
	}
	return n, err
}

// atEnd refuses a regular file whose end came before its size when it was
// opened (cut short while it was read: at a line boundary every record read
// looks whole) or that was modified since it was opened (same size, other
// bytes).
func (r *inputReader) atEnd() error {
	if r.n < r.in.Size {
		return fmt.Errorf("%s shrank while it was read (it had %d bytes when opened, %d when its end was reached): read it once it is complete", r.in.Path, r.in.Size, r.n)
	}
	fi, err := r.in.File.Stat()
	if err != nil {
		return fmt.Errorf("reading %s: %w", r.in.Path, err)
	}
	if fi.Size() != r.in.Size || !fi.ModTime().Equal(r.in.ModTime) {
		return fmt.Errorf("%s changed while it was read (modified at %s, after it was opened): read it once it is complete", r.in.Path, fi.ModTime().Format(time.RFC3339Nano))
	}
	return nil
}

// ReadInputFile reads the whole file at path, as OpenInput opens it, and
// refuses one of more than limit bytes (what names the kind of file in the
// error, e.g. "a config"); limit 0 means the memory the process may use
// (MemoryBudget).
func ReadInputFile(path string, limit int64, what ...string) ([]byte, error) {
	in, err := OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	kind := "a file"
	if len(what) > 0 {
		kind = what[0]
	}
	if limit <= 0 {
		limit = machine.MemoryBudget(0)
	}
	if in.Regular && in.Size > limit {
		return nil, fmt.Errorf("%s is %s, larger than %s, the most jeirt reads of %s", path, machine.Bytes(in.Size), machine.Bytes(limit), kind)
	}
	in.Limit(limit, kind)
	size := in.Size
	if size < 0 {
		size = 0
	}
	buf := make([]byte, 0, size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := in.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
