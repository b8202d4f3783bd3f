// Writes GPT-2 reference token ids (npm gpt-3-encoder) for a varied set of
// strings as JSON on stdout; run by make_gpt2_fixtures.sh, which installs the
// package in a temporary directory. Usage: node make_gpt2_fixtures.js ENCODER_DIR
const path = require('path');
const { encode } = require(path.join(process.argv[2], 'index.js'));

const cases = [
  // English and punctuation
  'Hello world',
  'Hello, world! How are you today?',
  'The quick brown fox jumps over the lazy dog.',
  'First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n',
  'A',
  '',
  ' ',
  'hello   world',
  // whitespace runs: trailing, multiple spaces, newlines, tabs, CRLF
  'trailing space ',
  'two trailing spaces  ',
  '   leading spaces',
  'a  b   c    d     e',
  'line one\nline two\n\n\nline five',
  '\n\n\n',
  'tab\tseparated\t\tvalues\t',
  '\t\tindented with tabs',
  'windows\r\nline\r\nendings\r\n',
  'mixed \t \n  whitespace \n\t end',
  ' \n word',
  '    def f():\n        return 1\n',
  // contractions and apostrophes
  "I'm sure you'll see they've done what we'd've said, isn't it?",
  "Don't DON'T don't 's 't 're 've 'm 'll 'd",
  "rock 'n' roll, the '90s, O'Brien's",
  '\u2018curly\u2019 quotes \u201cdouble\u201d and it\u2019s',
  "''' ' '' '",
  // digits
  '12345 67890 3.14159 1,000,000 -42 +7 1e10',
  '2024-01-15T12:34:56Z',
  '0x1F 0b1010 007',
  '\u0661\u0662\u0663 \u00bd \u00b2 \u2163',
  // accents and other scripts
  'caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00fcber Stra\u00dfe se\u00f1or',
  'e\u0301 combining acute vs \u00e9 precomposed',
  '\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440!',
  '\u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5 \u039a\u03cc\u03c3\u03bc\u03b5',
  '\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd and \u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645',
  '\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e',
  '\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e0a\u0e32\u0e27\u0e42\u0e25\u0e01',
  // CJK
  '\u4f60\u597d\uff0c\u4e16\u754c\uff01',
  '\u65e5\u672c\u8a9e\u306e\u6587\u7ae0\u3068\u30ab\u30bf\u30ab\u30ca\u3002',
  '\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8',
  '\u4e2d\u6587 English \u6df7\u5408 text 123',
  // emoji, incl. ZWJ sequences, skin tones, flags, keycaps
  'I love \ud83c\udf55 and \ud83c\udf7a!',
  '\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67\u200d\ud83d\udc66 family',
  '\ud83d\udc4d\ud83c\udffd thumbs \ud83c\uddfa\ud83c\uddf8 flag 1\ufe0f\u20e3 keycap',
  '\ud83c\udff3\ufe0f\u200d\ud83c\udf08\ud83e\uddd1\u200d\ud83d\udcbb\u2764\ufe0f\u200d\ud83d\udd25',
  '\ud83d\ude00\ud83d\ude03\ud83d\ude04\ud83d\ude01 \ud83d\ude06',
  // code and markup
  'int main(int argc, char** argv) { return argc > 1 ? 0 : -1; }',
  'for (let i = 0; i < n; i++) {\n\tsum += a[i] * b[i];\n}',
  '{"a":1,"b":[1,2,3],"c":"x","d":{"e":null}}',
  '["a","b"],["c"],[1],[2]',
  "f(x),\"y\" g('a','b') h(\"\",\"\")",
  'x = {"key": "value", "list": [1, 2, 3]}',
  '<div class="main"><p>Hello &amp; welcome</p></div>',
  'https://example.com/path?query=1&other=two#frag',
  'user@example.com $100.00 50% #hashtag @mention ~tilde ^caret',
  '!!!??? ... --- *** ,,, ;;; ::: ((())) [[[]]]',
  ',,,,,,,,,,,,,,,, .,", \',\' ).,", ],"',
  // mixed scripts
  'Tokyo\u6771\u4eacMoscow\u041c\u043e\u0441\u043a\u0432\u0430Cairo\u0627\u0644\u0642\u0627\u0647\u0631\u0629',
  'abc\u4e2ddef123\u0661\u0662ghi',
  // Unicode spaces and invisible characters
  'no\u00a0break\u00a0space',
  'ideographic\u3000space\u3000\u3000end\u3000',
  'thin\u2009space en\u2002space em\u2003space',
  'zero\u200bwidth\u200cnon\u200djoiner',
  '\ufeffbyte order mark and\ufeffinner',
  'line\u2028separator\u2029paragraph',
  'next\u0085line and mongolian\u180evowel',
  'nbsp before word \u00a0word and after\u00a0 ',
  'narrow\u202fnbsp and math\u205fspace and ogham\u1680mark',
  // odd characters
  '\u0000nul\u0001soh\u007fdel',
  'soft\u00adhyphen',
  '\ud800\udc00 first supplementary, \u{10ffff} last code point',
  'Supercalifragilisticexpialidocious antidisestablishmentarianism',
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  '                                                                end',
  '<|endoftext|> is just text here',
];

const generator = 'npm gpt-3-encoder@' + require(path.join(process.argv[2], 'package.json')).version;
const lines = cases.map(text => {
  const ids = encode(text);
  if (ids.some(x => typeof x !== 'number')) throw new Error('non-numeric id for ' + JSON.stringify(text));
  // (The reference decode() is not checked: its TextDecoder drops a leading
  // U+FEFF. Our test checks that our decode gives back the exact bytes.)
  return JSON.stringify({ text, ids });
});
// One case per line, so a regenerated file diffs readably.
process.stdout.write('{"generator": ' + JSON.stringify(generator) + ', "cases": [\n' + lines.join(',\n') + '\n]}\n');
