//go:build cuda

package cuda

import _ "gorgonia.org/cu"
