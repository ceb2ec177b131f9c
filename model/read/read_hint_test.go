package read

import (
	"os"
	"path/filepath"
	"testing"
)

// A file whose format auto guessed wrongly says what was guessed and what
// the file more likely is, naming its own columns; a file whose format was
// given, or a matrix with one bad cell, is not sent to --columns. (The
// library names its settings bare; the commands write them as flags.)
func TestGuessedWrong(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, content, format, want string }{
		{"nqs.csv", "name,question,score\nm1,q1,1\nm2,q1,0\n", "",
			`nqs.csv:2: column "question": "q1" is not a 0/1 label; the format was guessed as wide (first column "name" names the models; 2 item columns); if it is a long file (one row per model and item), name its columns: columns model=name,item=question,label=score`},
		// The label is the column that holds one, and a model column named
		// so is the model, wherever they stand.
		{"order.csv", "id,model_id,outcome,note\nq1,gpt,1,x\n", "",
			`order.csv:2: column "model_id": "gpt" is not a 0/1 label; the format was guessed as wide-items (first column "id" names the items; 3 model columns); if it is a long file (one row per model and item), name its columns: columns model=model_id,item=id,label=outcome`},
		{"texts.csv", "item_id,text\nq1,What is 2+2?\n", "",
			`texts.csv:2: column "text": "What is 2+2?" is not a 0/1 label; the format was guessed as wide-items (first column "item_id" names the items; 1 model columns); but it looks like an item-text file (item id column "item_id", text column "text"): give it with items, and the responses with data`},
		{"cell.csv", "model,q1,q2\nm1,1,maybe\n", "",
			`cell.csv:2: column "q2": "maybe" is not a 0/1 label`},
		{"given.csv", "name,question,score\nm1,q1,1\n", "wide",
			`given.csv:2: column "question": "q1" is not a 0/1 label`},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := File(path, Options{Format: c.format})
		if err == nil || err.Error() != filepath.Join(dir, c.want) {
			t.Errorf("%s: got %v\nwant %s", c.name, err, filepath.Join(dir, c.want))
		}
	}
}
