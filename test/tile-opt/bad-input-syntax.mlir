// RUN: not tile-opt %s --split-input-file 2>&1 | FileCheck %s --implicit-check-not=Traceback --implicit-check-not="internal error"
//
// Input that does not parse: unbalanced brackets, a missing token, a misspelled op or
// dialect, a file cut short, bytes that are not text. Each is an error at its line and
// column that says what is wrong (where MLIR's own words are terse, in plainer ones),
// and tile-opt exits 1 without a traceback. The byte-level cases are written by
// Python, since a lit file is text.
//
// RUN: %python -c "import sys; sys.stdout.buffer.write(b'module {' + bytes([10]) + b'  func.func private @f() attributes {note = ' + bytes([34, 0xff, 34]) + b'}' + bytes([10]) + b'}' + bytes([10]))" > %t.not-utf8.mlir
// RUN: not tile-opt %t.not-utf8.mlir 2>&1 | FileCheck %s --check-prefix=NOT-UTF8 --implicit-check-not=Traceback
// NOT-UTF8: not-utf8.mlir:2:46: error: byte 0xff is not UTF-8: MLIR source must be UTF-8 text
// NOT-UTF8-NEXT: {{^}}  func.func private @f() attributes {note = "
// NOT-UTF8-NEXT: {{^                                             \^$}}
//
// A UTF-8 sequence cut short.
// RUN: %python -c "import sys; sys.stdout.buffer.write(b'module {' + bytes([10]) + b'  func.func private @f() attributes {note = ' + bytes([34, 0xe2, 0x82, 34]) + b'}' + bytes([10]) + b'}' + bytes([10]))" > %t.cut-utf8.mlir
// RUN: not tile-opt %t.cut-utf8.mlir 2>&1 | FileCheck %s --check-prefix=CUT-UTF8 --implicit-check-not=Traceback
// CUT-UTF8: cut-utf8.mlir:2:46: error: byte 0xe2 is not UTF-8: MLIR source must be UTF-8 text
//
// Random bytes.
// RUN: %python -c "import sys, random; sys.stdout.buffer.write(random.Random(7).randbytes(4096))" > %t.garbage.mlir
// RUN: not tile-opt %t.garbage.mlir 2>&1 | FileCheck %s --check-prefix=GARBAGE --implicit-check-not=Traceback
// GARBAGE: garbage.mlir:1:2: error: byte 0xb4 is not UTF-8: MLIR source must be UTF-8 text
//
// Not UTF-8, on stdin.
// RUN: %python -c "import sys; sys.stdout.buffer.write(b'module {' + bytes([10, 0xc0, 10]) + b'}')" | not tile-opt - 2>&1 | FileCheck %s --check-prefix=STDIN --implicit-check-not=Traceback
// STDIN: <stdin>:2:1: error: byte 0xc0 is not UTF-8: MLIR source must be UTF-8 text
//
// A NUL byte, which MLIR's lexer would skip without a word.
// RUN: %python -c "import sys; sys.stdout.buffer.write(b'module {' + bytes([10]) + b'  func.func private @f()' + bytes([0, 10]) + b'}' + bytes([10]))" > %t.nul.mlir
// RUN: not tile-opt %t.nul.mlir 2>&1 | FileCheck %s --check-prefix=NUL --implicit-check-not=Traceback
// NUL: nul.mlir:2:25: error: unexpected NUL byte (0x00): MLIR source must be text
//
// A control character.
// RUN: %python -c "import sys; sys.stdout.buffer.write(b'module {' + bytes([10]) + b'  func.func private @f()' + bytes([7, 10]) + b'}' + bytes([10]))" > %t.bel.mlir
// RUN: not tile-opt %t.bel.mlir 2>&1 | FileCheck %s --check-prefix=BEL --implicit-check-not=Traceback
// BEL: bel.mlir:2:25: error: unexpected character U+0007: it starts no MLIR token here
//
// A byte-order mark.
// RUN: %python -c "import sys; sys.stdout.buffer.write(bytes([0xef, 0xbb, 0xbf]) + b'module {' + bytes([10]) + b'}' + bytes([10]))" > %t.bom.mlir
// RUN: not tile-opt %t.bom.mlir 2>&1 | FileCheck %s --check-prefix=BOM --implicit-check-not=Traceback
// BOM: bom.mlir:1:1: error: unexpected byte-order mark (U+FEFF): save the file as UTF-8 without a BOM
//
// Punctuation that is no MLIR at all.
// RUN: %python -c "print('@@@ ### !!!')" | not tile-opt - 2>&1 | FileCheck %s --check-prefix=PUNCT --implicit-check-not=Traceback
// PUNCT: <stdin>:1:2: error: @ identifier expected to start with letter or '_'

// The attribute dictionary is not closed.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:158: error: expected '}' in attribute dictionary{{$}}
func.func @open_dictionary(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread" : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The operand list is not closed.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:23: error: expected ')' to end operand list{{$}}
func.func @open_operands(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// One '}' too many.
// CHECK: bad-input-syntax.mlir:[[@LINE+4]]:2: error: expected operation name in quotes, but found a '}' that closes nothing: is there one too many?{{$}}
func.func @extra_brace(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
}

// -----

// The function is not closed.
// CHECK: bad-input-syntax.mlir:[[@LINE+3]]:9: error: expected operation name in quotes, but the input ends here: is it cut short, or is a closing '}' missing?{{$}}
func.func @open_function(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return

// -----

// #tile.layout< is not closed.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:89: error: unbalanced '<' character in pretty dialect name{{$}}
func.func @open_layout(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4]"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The layout's string is not closed.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:193: error: expected '"' in string literal{{$}}
func.func @open_string(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4]>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A '=' is missing.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:30: error: expected '}' in attribute dictionary{{$}}
func.func @no_equals(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A ',' is missing between attributes.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:38: error: expected '}' in attribute dictionary{{$}}
func.func @no_comma(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum" exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A character no MLIR token starts with.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:33: error: unexpected character '`': it starts no MLIR token here{{$}}
func.func @backtick(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = `sum`, exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The op's name, capitalised.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:3: error: unknown operation 'tile.Reduce' (did you mean 'tile.reduce'?); the tile dialect's operations are: tile.reduce, tile.reduce2, tile.reduce3, tile.reduce4, tile.reduce5, tile.reduce6, tile.reduce7, tile.reduce8, tile.copy{{$}}
func.func @capitalised(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.Reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The op's name, misspelled.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:3: error: unknown operation 'tile.reduc' (did you mean 'tile.reduce'?); the tile dialect's operations are: tile.reduce, tile.reduce2, tile.reduce3, tile.reduce4, tile.reduce5, tile.reduce6, tile.reduce7, tile.reduce8, tile.copy{{$}}
func.func @reduc(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduc"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The dialect's name, misspelled.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:16: error: unknown dialect 'tlie' in operation 'tlie.reduce' (did you mean 'tile.reduce'?); --allow-unregistered-dialect accepts ops of unknown dialects{{$}}
func.func @tlie(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tlie.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The op in custom form, which the tile dialect does not have.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:3: error: 'tile.reduce' has no custom form (ops defined in IRDL have only the generic one): write "tile.reduce"(operands) {attributes} : (operand types) -> (){{$}}
func.func @custom_form(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  tile.reduce %d, %s {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>)
  return
}

// -----

// No type after the op.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:62: error: expected ':' followed by operation type{{$}}
func.func @no_type(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"}
  return
}

// -----

// Three operands, two types.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:69: error: expected 3 operand types but had 2{{$}}
func.func @types_count(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An operand that is not defined.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:21: error: use of undefined value '%x': no op result or block argument before it has that name{{$}}
func.func @undefined_value(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %x) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An operand whose type is not the one declared.
// CHECK: bad-input-syntax.mlir:[[@LINE+3]]:21: error: use of value '%s' expects different type than prior uses: 'memref<8xf32, #gpu.address_space<private>>' vs 'memref<4xf32, #gpu.address_space<private>>'{{$}}
// CHECK: bad-input-syntax.mlir:[[@LINE+1]]:71: note: prior use here{{$}}
func.func @wrong_type(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<8xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The file stops in the middle of the op.
// CHECK: bad-input-syntax.mlir:[[@LINE+2]]:52: error: expected attribute value, but the input ends here: is it cut short, or is a closing '}' missing?{{$}}
func.func @cut_short(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = 
