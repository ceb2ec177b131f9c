package encoder

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jeirt/jeirt/model/fileio"
	"github.com/jeirt/jeirt/model/tensorfile"
)

// Vectors is a table of item vectors in file order.
type Vectors struct {
	IDs  []string
	Rows [][]float32
	Dim  int
}

// IDsPath is the id list that goes with a .npy file (or a .safetensors file
// without ids in its metadata): the same name with the extension replaced
// by ".ids.txt", one id per line.
func IDsPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".ids.txt"
}

// ReadVectors reads item vectors, choosing the format by extension:
//
//	.json         an object {"item_id": [floats], ...} (the JE-IRT reference's format)
//	.jsonl        one {"id": ..., "embedding": [...]} per line (what jeirt encode writes)
//	.npy          a 2-D float32/float64 array; ids in IDsPath(path)
//	.safetensors  tensor "embeddings" (items × dim); ids in metadata "ids" (a JSON list) or IDsPath(path)
//	.csv          item_id,v1,v2,... with an optional header row
//
// Every item must have a vector of the same length, finite values and an
// id not seen before; errors name the file and the item (or line).
func ReadVectors(path string) (*Vectors, error) {
	var v *Vectors
	var err error
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".json":
		v, err = readVectorsJSON(path)
	case ".jsonl":
		v, err = readVectorsJSONL(path)
	case ".npy":
		v, err = readVectorsNpy(path)
	case ".safetensors":
		v, err = readVectorsSafetensors(path)
	case ".csv":
		v, err = readVectorsCSV(path)
	default:
		return nil, fmt.Errorf("%s: unknown vector file type %q (want .json, .jsonl, .npy, .safetensors or .csv)", path, ext)
	}
	if err != nil {
		return nil, err
	}
	return v, v.check(path)
}

func (v *Vectors) check(path string) error {
	if len(v.IDs) != len(v.Rows) {
		return fmt.Errorf("%s: %d ids for %d vectors", path, len(v.IDs), len(v.Rows))
	}
	if len(v.Rows) == 0 {
		return fmt.Errorf("%s: no vectors", path)
	}
	v.Dim = len(v.Rows[0])
	seen := make(map[string]int, len(v.IDs))
	for i, id := range v.IDs {
		if id == "" {
			return fmt.Errorf("%s: item %d has an empty id", path, i+1)
		}
		if j, ok := seen[id]; ok {
			return fmt.Errorf("%s: item id %q appears twice (items %d and %d)", path, id, j+1, i+1)
		}
		seen[id] = i
		if len(v.Rows[i]) != v.Dim {
			return fmt.Errorf("%s: item %q has %d values, but item %q has %d", path, id, len(v.Rows[i]), v.IDs[0], v.Dim)
		}
		for k, x := range v.Rows[i] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("%s: item %q value %d is %v", path, id, k, x)
			}
		}
	}
	if v.Dim == 0 {
		return fmt.Errorf("%s: vectors are empty", path)
	}
	return nil
}

func readVectorsJSON(path string) (*Vectors, error) {
	f, err := fileio.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A token stream keeps the file's key order, which a map would lose.
	dec := json.NewDecoder(f)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("%s: want a JSON object {\"item_id\": [floats], ...}", path)
	}
	v := &Vectors{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		id := t.(string)
		var row []float32
		if err := dec.Decode(&row); err != nil {
			return nil, fmt.Errorf("%s: item %q: want a list of numbers: %w", path, id, err)
		}
		v.IDs = append(v.IDs, id)
		v.Rows = append(v.Rows, row)
	}
	return v, nil
}

// jsonlRecord is one line of a .jsonl vector file.
type jsonlRecord struct {
	ID        string    `json:"id"`
	Embedding []float32 `json:"embedding"`
}

func readVectorsJSONL(path string) (*Vectors, error) {
	f, err := fileio.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v := &Vectors{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r jsonlRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if r.ID == "" {
			return nil, fmt.Errorf("%s:%d: field \"id\" is missing or empty", path, line)
		}
		v.IDs = append(v.IDs, r.ID)
		v.Rows = append(v.Rows, r.Embedding)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

func readIDs(path string) ([]string, error) {
	b, err := fileio.ReadInputFile(path, 0, "an ids file")
	if err != nil {
		return nil, err
	}
	s := strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}

func readVectorsNpy(path string) (*Vectors, error) {
	rows, err := tensorfile.ReadNPY(path)
	if err != nil {
		return nil, err
	}
	ids, err := readIDs(IDsPath(path))
	if err != nil {
		return nil, fmt.Errorf("%s: the item ids go in %s, one per line: %w", path, IDsPath(path), err)
	}
	if len(ids) != len(rows) {
		return nil, fmt.Errorf("%s: %d rows but %s has %d ids", path, len(rows), IDsPath(path), len(ids))
	}
	return &Vectors{IDs: ids, Rows: rows}, nil
}

func readVectorsSafetensors(path string) (*Vectors, error) {
	st, err := tensorfile.ReadSafetensors(path)
	if err != nil {
		return nil, err
	}
	t, ok := st.Tensors["embeddings"]
	if !ok {
		return nil, fmt.Errorf("%s: no tensor \"embeddings\" (items × dim)", path)
	}
	if len(t.Shape) != 2 {
		return nil, fmt.Errorf("%s: tensor \"embeddings\" has shape %v, want (items, dim)", path, t.Shape)
	}
	v := &Vectors{}
	if s, ok := st.Metadata["ids"]; ok {
		if err := json.Unmarshal([]byte(s), &v.IDs); err != nil {
			return nil, fmt.Errorf("%s: metadata \"ids\" must be a JSON list of strings: %w", path, err)
		}
	} else if v.IDs, err = readIDs(IDsPath(path)); err != nil {
		return nil, fmt.Errorf("%s: no metadata \"ids\" and no id file: %w", path, err)
	}
	n, d := t.Shape[0], t.Shape[1]
	if len(v.IDs) != n {
		return nil, fmt.Errorf("%s: %d rows but %d ids", path, n, len(v.IDs))
	}
	for i := 0; i < n; i++ {
		v.Rows = append(v.Rows, t.Data[i*d:(i+1)*d])
	}
	return v, nil
}

func readVectorsCSV(path string) (*Vectors, error) {
	f, err := fileio.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	v := &Vectors{}
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) < 2 {
			return nil, fmt.Errorf("%s:%d: want item_id,v1,v2,...; got %d field(s)", path, line, len(rec))
		}
		row := make([]float32, len(rec)-1)
		for k, s := range rec[1:] {
			x, err := strconv.ParseFloat(strings.TrimSpace(s), 32)
			if err != nil {
				if line == 1 {
					row = nil // a header row
					break
				}
				return nil, fmt.Errorf("%s:%d: column %d: value %q is not a number", path, line, k+2, s)
			}
			row[k] = float32(x)
		}
		if row == nil {
			continue
		}
		v.IDs = append(v.IDs, rec[0])
		v.Rows = append(v.Rows, row)
	}
	return v, nil
}

// WriteVectors writes v atomically, choosing the format by extension: .npy
// (with the ids in IDsPath(path)), .safetensors (tensor "embeddings", ids and
// meta in the metadata) or .jsonl. meta is ignored by .npy and .jsonl.
func WriteVectors(path string, v *Vectors, meta map[string]string) error {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".npy":
		if err := tensorfile.WriteNPY(path, v.Rows, v.Dim); err != nil {
			return err
		}
		return fileio.WriteFileAtomic(IDsPath(path), func(w io.Writer) error {
			for _, id := range v.IDs {
				if strings.ContainsAny(id, "\r\n") {
					return fmt.Errorf("item id %q contains a line break", id)
				}
				if _, err := fmt.Fprintln(w, id); err != nil {
					return err
				}
			}
			return nil
		})
	case ".safetensors":
		ids, err := json.Marshal(v.IDs)
		if err != nil {
			return err
		}
		m := map[string]string{"ids": string(ids)}
		for k, s := range meta {
			m[k] = s
		}
		data := make([]float32, 0, len(v.Rows)*v.Dim)
		for i, r := range v.Rows {
			if len(r) != v.Dim {
				return fmt.Errorf("%s: row %d has %d values, want %d", path, i, len(r), v.Dim)
			}
			data = append(data, r...)
		}
		return tensorfile.WriteSafetensorsFile(path, map[string]tensorfile.Tensor{"embeddings": {Shape: []int{len(v.Rows), v.Dim}, Data: data}}, m)
	case ".jsonl":
		return fileio.WriteFileAtomic(path, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			for i, id := range v.IDs {
				if err := enc.Encode(jsonlRecord{ID: id, Embedding: v.Rows[i]}); err != nil {
					return err
				}
			}
			return nil
		})
	default:
		return fmt.Errorf("%s: unknown output type %q (want .npy, .safetensors or .jsonl)", path, ext)
	}
}

// ItemEncoder is an Encoder whose vectors belong to item ids rather than
// texts: Precomputed. Training asks for EncodeItems when the encoder has it.
type ItemEncoder interface {
	Encoder
	EncodeItems(ctx context.Context, ids []string) ([][]float32, error)
}

// ErrByItemID is returned by Precomputed.Encode: its vectors are looked up
// by item id.
var ErrByItemID = errors.New("precomputed vectors are looked up by item id, not by text (use EncodeItems)")

// Precomputed serves vectors computed elsewhere (spec precomputed:FILE),
// looked up by item id. Its fingerprint is a hash of the file's ids and
// vectors.
type Precomputed struct {
	Path        string
	Vectors     *Vectors
	index       map[string]int
	fingerprint string
}

// OpenPrecomputed reads a vector file with ReadVectors.
func OpenPrecomputed(path string) (*Precomputed, error) {
	v, err := ReadVectors(path)
	if err != nil {
		return nil, err
	}
	p := &Precomputed{Path: path, Vectors: v, index: make(map[string]int, len(v.IDs))}
	h := sha256.New()
	for i, id := range v.IDs {
		p.index[id] = i
		fmt.Fprintf(h, "%q:", id)
		for _, x := range v.Rows[i] {
			binary.Write(h, binary.LittleEndian, x)
		}
	}
	p.fingerprint = fmt.Sprintf("precomputed/%x/dim=%d", h.Sum(nil)[:16], v.Dim)
	return p, nil
}

// Dim implements Encoder.
func (p *Precomputed) Dim() int { return p.Vectors.Dim }

// Fingerprint implements Encoder.
func (p *Precomputed) Fingerprint() string { return p.fingerprint }

// Encode implements Encoder by refusing: texts have no ids.
func (p *Precomputed) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	return nil, fmt.Errorf("%s: %w", p.Path, ErrByItemID)
}

// EncodeItems returns the vector of each id, in order (shared, not copied).
// Missing ids are an error that names up to five of them.
func (p *Precomputed) EncodeItems(ctx context.Context, ids []string) ([][]float32, error) {
	out := make([][]float32, len(ids))
	var missing []string
	for i, id := range ids {
		j, ok := p.index[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		out[i] = p.Vectors.Rows[j]
	}
	if len(missing) > 0 {
		show := missing[:min(5, len(missing))]
		return nil, fmt.Errorf("%s: %d of %d items have no vector, e.g. %q", p.Path, len(missing), len(ids), show)
	}
	return out, nil
}
