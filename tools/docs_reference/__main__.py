"""`python -m tools.docs_reference DIR`: write the generated Reference pages under DIR."""
import sys
from pathlib import Path

from . import pages

if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit('usage: python -m tools.docs_reference DIR')
    for path, text in pages().items():
        out = Path(sys.argv[1]) / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding='utf-8')
        print(out)
