package tokenizer_test

import (
	"fmt"

	"github.com/jeirt/jeirt/encoder/tokenizer"
)

// Load reads the tokenizer.json of a sentence-transformers folder; ids match
// the Hugging Face tokenizers library, truncated to maxLen tokens.
func ExampleLoad() {
	tok, err := tokenizer.Load("models/all-MiniLM-L6-v2/tokenizer.json", 256)
	if err != nil {
		fmt.Println(err)
		return
	}
	enc, err := tok.Encode("Fix the failing test in utils.py")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(enc.IDs, enc.AttentionMask)
}
