"""The Turkish words of software work, with their English equivalents, for the lexicon.

KeNet, the Turkish WordNet the lexicon is built from (:mod:`dreamdb.lexicon`), describes general Turkish: it lacks
the words a developer writes every day (``istemci``, *client*; ``derleme``, *build*; ``kurulum``, *installation*;
``önbellek``, *cache*) or lists their everyday senses only (``sürüm``: *circulation, currency* before *version*;
``günlük``: *daily*, never *log*). A query word it lacks is looked up by a shorter root, which is another word:
``kurulum`` became *nest* (of ``kurulmak``, to sprawl), ``istemci`` *demand* (of ``istem``), and ``sürümü``
*currency* (QA round 54). dreamdb's notes are an agent's notes about software, so these words matter most.

:data:`COMPUTING_TR_EN` lists them, each with its English equivalents in the order a developer means them. It was
written by hand from the equivalents Turkish software localisation uses (the Türkiye Bilişim Derneği's *Bilişim
Terimleri Sözlüğü*; the Turkish translations of GNOME, KDE and Ubuntu), never from an evaluation query. A word whose
everyday sense is as common in developers' Turkish as its technical one lists the everyday sense first (``günlük``:
*daily*, then *log*; ``kuyruk``: *tail*, then *queue*): with no other word in the query the everyday sense stands,
and the query's other words choose the technical one where the notes write it beside them
(:func:`dreamdb.ranking.rank.in_context`). ``dreamdb lexicon build`` puts these senses before KeNet's for the same
word, in both directions (*version* → ``sürüm`` first).

Three words every glossary of the field has are left out, because queries of dreamdb's gold set hold them
(``oturum``, ``bağlam``, ``kayıt``): an entry chosen while knowing that could not be told from tuning on them.
KeNet's senses for them stand (``oturum``: *session*).

Verbs are listed by their infinitive (``-mak``/``-mek``), as KeNet lists them. Every English word is one word, as
the lexicon keeps only those.
"""

from __future__ import annotations

GLOSSARY_VERSION = "4"
"""Version of :data:`COMPUTING_TR_EN`, recorded in a built lexicon (``glossary_version``): ``dreamdb lexicon
status`` tells a file built with another to be built again."""

COMPUTING_TR_EN: tuple[tuple[str, tuple[str, ...]], ...] = (
    # versions, builds, releases
    ("sürüm", ("version", "release")),
    ("derleme", ("build", "compilation", "compile")),
    ("derlemek", ("compile", "build")),
    ("yayın", ("publication", "broadcast", "release")),
    ("yayınlamak", ("publish", "release")),
    ("dağıtım", ("deployment", "distribution", "release")),
    ("dağıtmak", ("deploy", "distribute")),
    ("kurulum", ("installation", "install", "setup")),
    ("kurmak", ("install", "set", "establish")),
    ("yükleme", ("installation", "upload", "loading")),
    ("yüklemek", ("install", "upload", "load")),
    ("güncelleme", ("update", "upgrade")),
    ("güncellemek", ("update",)),
    ("yükseltme", ("upgrade",)),
    ("yükseltmek", ("upgrade",)),
    ("taşıma", ("transport", "migration")),
    ("geliştirme", ("development",)),
    ("geliştirici", ("developer",)),
    ("üretim", ("production",)),
    ("ortam", ("environment",)),
    # version control
    ("dal", ("branch",)),
    ("birleştirme", ("merge", "combination")),
    ("birleştirmek", ("merge", "combine")),
    ("çakışma", ("conflict", "collision")),
    ("depo", ("storage", "repository", "store")),
    ("çatal", ("fork",)),
    ("etiket", ("tag", "label")),
    ("değişiklik", ("change",)),
    ("yama", ("patch",)),
    # testing, errors
    ("test", ("test",)),
    ("sınama", ("test", "testing")),
    ("hata", ("error", "bug", "fault")),
    ("ayıklama", ("debugging",)),
    ("ayıklamak", ("debug",)),
    ("düzeltme", ("fix", "correction")),
    ("düzeltmek", ("fix", "correct")),
    ("istisna", ("exception",)),
    ("kilitlenme", ("deadlock", "lock", "hang")),
    ("zamanaşımı", ("timeout",)),
    ("uyarı", ("warning", "alert")),
    # systems
    ("istemci", ("client",)),
    ("sunucusuz", ("serverless",)),
    ("önbellek", ("cache",)),
    ("bellek", ("memory",)),
    ("ağ", ("network", "net")),
    ("kablosuz", ("wireless", "cordless")),
    ("hız", ("speed", "rate", "velocity")),
    ("bağlantı", ("connection", "link")),
    ("istek", ("request",)),
    ("yanıt", ("response", "reply")),
    ("bulut", ("cloud",)),
    ("kapsayıcı", ("container",)),
    ("konteyner", ("container",)),
    ("süreç", ("process",)),
    ("işlem", ("process", "operation", "transaction")),
    ("görev", ("task", "job")),
    ("kuyruk", ("tail", "queue")),
    ("zamanlayıcı", ("scheduler", "timer")),
    ("olay", ("event",)),
    ("bildirim", ("notification",)),
    ("izleme", ("watching", "monitoring", "tracking")),
    ("gecikme", ("delay", "latency")),
    ("yedek", ("spare", "backup")),
    ("yedekleme", ("backup",)),
    ("arkaplan", ("background",)),
    ("yığın", ("stack", "heap", "pile")),
    # security
    ("şifreleme", ("encryption",)),
    ("şifrelemek", ("encrypt",)),
    ("şifre", ("password", "cipher")),
    ("şifresiz", ("unencrypted", "passwordless")),
    ("parola", ("password",)),
    ("kimlik", ("identity", "credential")),
    ("doğrulama", ("verification", "validation", "authentication")),
    ("yetkilendirme", ("authorization",)),
    ("erişim", ("access",)),
    ("izin", ("permission",)),
    ("anahtar", ("key",)),
    ("sertifika", ("certificate",)),
    ("imza", ("signature",)),
    ("belirteç", ("token",)),
    ("çerez", ("cookie",)),
    ("giriş", ("entry", "login", "introduction")),
    ("çıkış", ("exit", "logout", "output")),
    # data
    ("veritabanı", ("database",)),
    ("sorgu", ("query",)),
    ("tablo", ("table",)),
    ("sütun", ("column",)),
    ("satır", ("line", "row")),
    ("şema", ("schema", "diagram")),
    ("dizin", ("directory", "index")),
    ("dizinleme", ("indexing",)),
    ("klasör", ("folder", "directory")),
    ("dosya", ("file",)),
    ("günlük", ("daily", "log", "journal")),
    ("günlükleme", ("logging",)),
    ("arama", ("search", "call")),
    ("sıralama", ("ranking", "sorting", "ordering")),
    ("eşleşme", ("match",)),
    ("gömme", ("embedding",)),
    ("vektör", ("vector",)),
    ("değer", ("value",)),
    ("dizge", ("string",)),
    ("dizi", ("series", "array")),
    ("karma", ("mixed", "hash", "hybrid")),
    ("ayrıştırma", ("parsing",)),
    ("ayrıştırmak", ("parse",)),
    ("ayrıştırıcı", ("parser",)),
    # code
    ("kütüphane", ("library",)),
    ("paket", ("package",)),
    ("bağımlılık", ("dependency", "addiction")),
    ("eklenti", ("plugin", "extension")),
    ("uzantı", ("extension",)),
    ("bileşen", ("component",)),
    ("özellik", ("feature", "property", "attribute")),
    ("arayüz", ("interface",)),
    ("işlev", ("function",)),
    ("fonksiyon", ("function",)),
    ("yöntem", ("method",)),
    ("değişken", ("variable",)),
    ("nesne", ("object",)),
    ("sınıf", ("class",)),
    ("döngü", ("loop", "cycle")),
    ("koşul", ("condition",)),
    ("betik", ("script",)),
    ("komut", ("command",)),
    ("kabuk", ("shell",)),
    ("çıktı", ("output",)),
    ("girdi", ("input",)),
    ("yapılandırma", ("configuration", "config")),
    ("yapılandırmak", ("configure",)),
    ("ayar", ("setting", "configuration")),
    ("şablon", ("template",)),
    ("belge", ("document",)),
    ("belgeleme", ("documentation",)),
    # agents
    ("istem", ("prompt", "demand")),
    ("kanca", ("hook",)),
    ("tetikleyici", ("trigger",)),
    ("beceri", ("skill",)),
    ("araç", ("vehicle", "tool")),
    ("pano", ("board", "dashboard", "clipboard")),
    ("kullanıcı", ("user",)),
    ("yönetici", ("administrator", "manager")),
)
"""``(Turkish word, its English equivalents in order)`` for the words of software work (see the module docstring).
Every English equivalent is one word."""
