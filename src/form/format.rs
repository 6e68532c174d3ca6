//! Reading and writing form files: JSON (with the explanations as `"// field"` keys) and
//! the CSV variant (`field,value,explanation`, one row per field) for spreadsheets.
//!
//! Writers are pure functions returning text. Readers parse into the raw mirror with the
//! field path of any error, then [`super::model::validate`].

use std::fmt::Write as _;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::error::FormError;
use super::fields::{self, FIELDS};
use super::model::{validate, Form, QuestionKind, RawForm, FORMAT_NAME, FORMAT_VERSION};

/// The two file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// JSON with explanations as `"// field"` keys.
    Json,
    /// One row per field: `field,value,explanation`.
    Csv,
}

impl FileFormat {
    /// The format a file name implies: `.csv` is CSV, anything else JSON.
    pub fn from_path(path: &std::path::Path) -> FileFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("csv") => FileFormat::Csv,
            _ => FileFormat::Json,
        }
    }
}

/// A key starting with this is an explanation for people, ignored by the reader.
pub const COMMENT_PREFIX: &str = "//";

// ---------------------------------------------------------------------------------------
// Writing JSON

enum Node {
    Leaf(Value),
    Obj(Vec<(String, Node)>),
}

struct Builder<'a> {
    question: Option<QuestionKind>,
    form: &'a RawForm,
    help: bool,
}

impl Builder<'_> {
    fn shown(&self, path: &str) -> bool {
        fields::find(path).is_none_or(|f| f.applies.shown_for(self.question))
    }

    fn comment(&self, out: &mut Vec<(String, Node)>, key: &str, path: &str) {
        if self.help {
            if let Some(h) = fields::help(path) {
                out.push((
                    format!("{COMMENT_PREFIX} {key}"),
                    Node::Leaf(Value::from(h)),
                ));
            }
        }
    }

    /// Adds `key` when it has a value, or when the question shows it (as `null`).
    fn leaf(&self, out: &mut Vec<(String, Node)>, key: &str, path: &str, value: Option<Value>) {
        if value.is_some() || self.shown(path) {
            self.comment(out, key, path);
            out.push((key.to_owned(), Node::Leaf(value.unwrap_or(Value::Null))));
        }
    }

    fn obj(
        &self,
        out: &mut Vec<(String, Node)>,
        key: &str,
        path: &str,
        children: Vec<(String, Node)>,
    ) {
        if !children.iter().any(|(k, _)| !k.starts_with(COMMENT_PREFIX)) {
            return;
        }
        self.comment(out, key, path);
        out.push((key.to_owned(), Node::Obj(children)));
    }

    fn boundary(&self, which: &str, b: &Option<super::model::RawBoundary>) -> Vec<(String, Node)> {
        let b = b.clone().unwrap_or_default();
        let mut out = Vec::new();
        let s = |v: Option<String>| v.map(Value::from);
        self.leaf(&mut out, "marker", &format!("{which}.marker"), s(b.marker));
        let c = b.clock.unwrap_or_default();
        let mut clock = Vec::new();
        self.leaf(
            &mut clock,
            "domain",
            &format!("{which}.clock.domain"),
            s(c.domain),
        );
        self.leaf(
            &mut clock,
            "instance",
            &format!("{which}.clock.instance"),
            s(c.instance),
        );
        self.obj(&mut out, "clock", &format!("{which}.clock"), clock);
        self.leaf(&mut out, "stream", &format!("{which}.stream"), s(b.stream));
        out
    }

    fn build(&self) -> Vec<(String, Node)> {
        let f = self.form;
        let s = |v: &Option<String>| v.clone().map(Value::from);
        let strings = |v: &Option<Vec<String>>| v.clone().map(Value::from);
        let mut out = vec![
            (
                "format".to_owned(),
                Node::Leaf(Value::from(f.format.clone())),
            ),
            ("version".to_owned(), Node::Leaf(Value::from(f.version))),
        ];
        if let Some(name) = &f.name {
            out.push(("name".to_owned(), Node::Leaf(Value::from(name.clone()))));
        }
        self.leaf(
            &mut out,
            "question",
            "question",
            f.question.map(|q| Value::from(q.code())),
        );
        self.leaf(&mut out, "description", "description", s(&f.description));
        let start = self.boundary("start", &f.start);
        self.obj(&mut out, "start", "start", start);
        let stop = self.boundary("stop", &f.stop);
        self.obj(&mut out, "stop", "stop", stop);
        self.leaf(
            &mut out,
            "work_streams",
            "work_streams",
            strings(&f.work_streams),
        );
        self.leaf(
            &mut out,
            "dependencies",
            "dependencies",
            f.dependencies
                .as_ref()
                .map(|d| serde_json::to_value(d).expect("dependencies serialize")),
        );
        self.wait(&mut out);
        self.run_plan(&mut out);
        self.binding(&mut out);
        out
    }

    /// The `wait` object, when the form has one or the question shows it.
    fn wait(&self, out: &mut Vec<(String, Node)>) {
        let f = self.form;
        if f.wait.is_some() || self.shown("wait.scope") {
            let s = |v: &Option<String>| v.clone().map(Value::from);
            let w = f.wait.clone().unwrap_or_default();
            let mut wait = Vec::new();
            self.leaf(
                &mut wait,
                "scope",
                "wait.scope",
                w.scope.map(|x| Value::from(x.code())),
            );
            self.leaf(&mut wait, "event", "wait.event", s(&w.event));
            self.leaf(&mut wait, "stream", "wait.stream", s(&w.stream));
            self.leaf(&mut wait, "device", "wait.device", s(&w.device));
            self.obj(out, "wait", "wait", wait);
        }
    }

    /// The steps, the runs and what is kept: `order` to `keep_failures`.
    fn run_plan(&self, out: &mut Vec<(String, Node)>) {
        let f = self.form;
        let strings = |v: &Option<Vec<String>>| v.clone().map(Value::from);
        self.leaf(out, "order", "order", strings(&f.order));
        self.leaf(out, "included", "included", strings(&f.included));
        self.leaf(out, "excluded", "excluded", strings(&f.excluded));
        self.leaf(
            out,
            "warmup_runs",
            "warmup_runs",
            f.warmup_runs.map(Value::from),
        );
        self.leaf(out, "samples", "samples", f.samples.map(Value::from));
        self.leaf(
            out,
            "statistics",
            "statistics",
            f.statistics
                .as_ref()
                .map(|v| Value::from(v.iter().map(|s| s.code()).collect::<Vec<_>>())),
        );
        self.leaf(
            out,
            "steady_state",
            "steady_state",
            f.steady_state.map(Value::from),
        );
        self.leaf(
            out,
            "keep_all_samples",
            "keep_all_samples",
            f.keep_all_samples.map(Value::from),
        );
        self.leaf(
            out,
            "keep_failures",
            "keep_failures",
            f.keep_failures.map(Value::from),
        );
    }

    /// The `binding`: its ids, or null when it has none.
    fn binding(&self, out: &mut Vec<(String, Node)>) {
        let f = self.form;
        // A binding with no ids is no binding: written as null, as the CSV writes it (a
        // form_json fuzz run found `"binding": {}` reading back differently through CSV).
        let binding = f.binding.as_ref().filter(|b| {
            [
                &b.capture,
                &b.question,
                &b.timer,
                &b.start_event,
                &b.end_event,
            ]
            .iter()
            .any(|v| v.is_some())
        });
        match binding {
            None => self.leaf(out, "binding", "binding", None),
            Some(b) => {
                self.comment(out, "binding", "binding");
                let mut children = Vec::new();
                for (k, v) in [
                    ("capture", &b.capture),
                    ("question", &b.question),
                    ("timer", &b.timer),
                    ("start_event", &b.start_event),
                    ("end_event", &b.end_event),
                ] {
                    if let Some(v) = v {
                        children.push((k.to_owned(), Node::Leaf(Value::from(v.clone()))));
                    }
                }
                out.push(("binding".to_owned(), Node::Obj(children)));
            }
        }
    }
}

/// One line, with `", "` and `": "` separators.
fn compact(v: &Value) -> String {
    match v {
        Value::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(compact).collect::<Vec<_>>().join(", ")
            )
        }
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", Value::from(k.clone()), compact(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

fn write_obj(out: &mut String, entries: &[(String, Node)], indent: usize) {
    if entries.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push_str("{\n");
    let pad = "  ".repeat(indent + 1);
    for (i, (k, node)) in entries.iter().enumerate() {
        let _ = write!(out, "{pad}{}: ", Value::from(k.clone()));
        match node {
            Node::Leaf(v) => out.push_str(&compact(v)),
            Node::Obj(children) => write_obj(out, children, indent + 1),
        }
        out.push_str(if i + 1 < entries.len() { ",\n" } else { "\n" });
    }
    let _ = write!(out, "{}}}", "  ".repeat(indent));
}

/// The form as JSON text ending with a newline. With `help`, every field shown is preceded
/// by its explanation as a `"// field"` key. Fields the question needs are written even
/// when unanswered (as `null`); others only when they hold a value.
pub fn to_json(form: &RawForm, help: bool) -> String {
    let builder = Builder {
        question: form.question,
        form,
        help,
    };
    let mut out = String::new();
    write_obj(&mut out, &builder.build(), 0);
    out.push('\n');
    out
}

// ---------------------------------------------------------------------------------------
// Writing CSV

/// The CSV rows' field paths for a form: every field its question shows (the binding as
/// its keys), plus any that hold a value.
fn csv_paths(form: &RawForm) -> Vec<&'static str> {
    let q = form.question;
    let mut paths = vec!["format", "version", "name"];
    for f in FIELDS {
        if f.path == "binding" {
            let keys: &[&'static str] = match q {
                Some(QuestionKind::DeviceInterval) => &[
                    "binding.question",
                    "binding.start_event",
                    "binding.end_event",
                ],
                Some(_) => &["binding.question", "binding.timer"],
                None => &[
                    "binding.question",
                    "binding.timer",
                    "binding.start_event",
                    "binding.end_event",
                ],
            };
            for k in keys.iter().chain(&["binding.capture"]) {
                paths.push(k);
            }
        } else if f.applies.shown_for(q) || fields::get(form, f.path).is_some() {
            paths.push(f.path);
        }
    }
    paths
}

/// The form as CSV text: a header `field,value,explanation`, then one row per field.
/// Unanswered fields have an empty value; `-` is an empty answer.
pub fn to_csv(form: &RawForm) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(["field", "value", "explanation"]);
    for path in csv_paths(form) {
        // An empty description is answered as empty: `-`, as the CSV reader and `--set` read it.
        let value = match fields::get(form, path) {
            Some(v) if v.is_empty() && path == "description" => "-".to_owned(),
            v => v.unwrap_or_default(),
        };
        let _ = w.write_record([path, &value, fields::help(path).unwrap_or("")]);
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("CSV of UTF-8 is UTF-8")
}

/// The form in `format`.
pub fn render(form: &RawForm, format: FileFormat) -> String {
    match format {
        FileFormat::Json => to_json(form, true),
        FileFormat::Csv => to_csv(form),
    }
}

// ---------------------------------------------------------------------------------------
// Reading

/// A JSON value read with duplicate keys refused (a `serde_json::Value` keeps the last).
struct Checked(Value);

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Checked;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Checked, E> {
                Ok(Checked(Value::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Checked, E> {
                Ok(Checked(Value::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Checked, E> {
                Ok(Checked(Value::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Checked, E> {
                Ok(Checked(Value::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Checked, E> {
                Ok(Checked(Value::from(v)))
            }
            fn visit_string<E>(self, v: String) -> Result<Checked, E> {
                Ok(Checked(Value::from(v)))
            }
            fn visit_unit<E>(self) -> Result<Checked, E> {
                Ok(Checked(Value::Null))
            }
            fn visit_none<E>(self) -> Result<Checked, E> {
                Ok(Checked(Value::Null))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Checked, D2::Error> {
                Checked::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
                let mut items = Vec::new();
                while let Some(Checked(v)) = seq.next_element()? {
                    items.push(v);
                }
                Ok(Checked(Value::Array(items)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
                let mut out = serde_json::Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    let Checked(value) = map.next_value()?;
                    if out.insert(key.clone(), value).is_some() {
                        return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
                    }
                }
                Ok(Checked(Value::Object(out)))
            }
        }
        d.deserialize_any(V)
    }
}

fn strip_comments(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| !k.starts_with(COMMENT_PREFIX));
            map.values_mut().for_each(strip_comments);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_comments),
        _ => {}
    }
}

fn path_of(p: &serde_path_to_error::Path) -> String {
    match p.to_string() {
        s if s == "." || s.is_empty() => "$".to_owned(),
        s => s,
    }
}

/// The field a serde message is about: `missing field `x`` and `duplicate field `x`` are
/// raised at the enclosing object, so the key is appended to its path.
fn field_of(path: String, message: &str) -> String {
    let key = ["missing field `", "duplicate field `"]
        .iter()
        .find_map(|p| message.strip_prefix(p))
        .and_then(|rest| rest.split('`').next());
    match key {
        Some(key) if path == "$" => key.to_owned(),
        Some(key) => format!("{path}.{key}"),
        None => path,
    }
}

/// serde's wording with this crate's type names turned into what the file should hold.
fn plain(message: &str) -> String {
    let mut out = message.replace("expected u32", "expected a whole number, 0 or more");
    while let Some(i) = out.find("struct Raw") {
        let end = out[i + "struct Raw".len()..]
            .find(|c: char| !c.is_alphanumeric())
            .map_or(out.len(), |j| i + "struct Raw".len() + j);
        out.replace_range(i..end, "an object");
    }
    out
}

/// JSON text → raw mirror (explanation keys dropped).
///
/// # Errors
/// `bad-syntax` (with the line), `not-an-object`, `duplicate-field`, `missing-field`,
/// `unknown-field`, `wrong-type`, `unknown-variant`, each naming the field.
pub fn parse_json(text: &str) -> Result<RawForm, FormError> {
    crate::error::refuse_bom(text)?;
    if text.trim().is_empty() {
        return Err(FormError::new(
            "$",
            "bad-syntax",
            "the file is empty; a JSON form object is expected (`worksheet form new` prints one)",
        ));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let checked: Checked = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        let inner = err.inner();
        let message = crate::error::explain_syntax(text, inner)
            .unwrap_or_else(|| crate::error::without_position(&inner.to_string()));
        let (field, code) = match inner.classify() {
            serde_json::error::Category::Data => (
                field_of(path_of(err.path()), &message),
                crate::error::serde_data_code(&message),
            ),
            _ => ("$".to_owned(), "bad-syntax"),
        };
        let mut e = FormError::new(field, code, message);
        if inner.line() > 0 {
            e.line = Some(inner.line());
        }
        e
    })?;
    de.end().map_err(|e| {
        FormError::new(
            "$",
            "bad-syntax",
            format!(
                "text after the JSON object: {}",
                crate::error::without_position(&e.to_string())
            ),
        )
        .at_line(e.line())
    })?;
    let mut value = checked.0;
    if !value.is_object() {
        return Err(FormError::new(
            "$",
            "not-an-object",
            "a form is a JSON object with `format`, `version` and its fields",
        ));
    }
    strip_comments(&mut value);
    serde_path_to_error::deserialize::<_, RawForm>(value).map_err(|err| {
        let message = err.inner().to_string();
        FormError::new(
            field_of(path_of(err.path()), &message),
            crate::error::serde_data_code(&message),
            plain(&message),
        )
    })
}

/// CSV text → raw mirror. The first row is the header (`field,value`, more columns are
/// ignored); each further row sets one field; an empty value leaves it unanswered.
///
/// # Errors
/// `bad-syntax` (with the line), `missing-field` (no `format` or `version` row),
/// `unknown-field`, `duplicate-field`, `bad-value`, each naming the field and the line.
pub fn parse_csv(text: &str) -> Result<RawForm, FormError> {
    crate::error::refuse_bom(text)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut form = RawForm::default();
    let mut seen: Vec<String> = Vec::new();
    let (mut has_format, mut has_version) = (false, false);
    for (i, record) in reader.records().enumerate() {
        let line = i + 1;
        let record = record.map_err(|e| {
            FormError::new("$", "bad-syntax", format!("not CSV: {e}")).at_line(line)
        })?;
        let field = record.get(0).unwrap_or("").trim();
        let value = record.get(1).unwrap_or("").trim();
        if i == 0 {
            if field != "field" || record.get(1).map(str::trim) != Some("value") {
                return Err(FormError::new(
                    "$",
                    "bad-syntax",
                    "the first row must be the header `field,value,explanation`",
                )
                .at_line(line));
            }
            continue;
        }
        if field.is_empty() && value.is_empty() {
            continue;
        }
        if seen.iter().any(|s| s == field) {
            return Err(FormError::new(
                field,
                "duplicate-field",
                format!("`{field}` has two rows"),
            )
            .at_line(line));
        }
        seen.push(field.to_owned());
        match field {
            "format" => {
                has_format = true;
                form.format = value.to_owned();
            }
            "version" => {
                has_version = true;
                form.version = value.parse().map_err(|_| {
                    FormError::new(
                        "version",
                        "wrong-type",
                        format!("`{value}` is not a version number"),
                    )
                    .at_line(line)
                })?;
            }
            _ if value.is_empty() => {
                if !fields::settable_paths().contains(&field) {
                    return Err(unknown_field(field).at_line(line));
                }
                fields::touch(&mut form, field);
            }
            _ => fields::set(&mut form, field, value).map_err(|message| {
                if fields::settable_paths().contains(&field) {
                    FormError::new(field, "bad-value", message).at_line(line)
                } else {
                    unknown_field(field).at_line(line)
                }
            })?,
        }
    }
    for (has, name) in [(has_format, "format"), (has_version, "version")] {
        if !has {
            return Err(FormError::new(
                name,
                "missing-field",
                format!("no `{name}` row"),
            ));
        }
    }
    Ok(form)
}

fn unknown_field(field: &str) -> FormError {
    FormError::new(
        field,
        "unknown-field",
        format!(
            "`{field}` is not a form field (fields: {})",
            fields::settable_paths().join(", ")
        ),
    )
}

/// Parses and validates a form from text in `format`; `file` names it in errors and gives
/// the default name.
///
/// # Errors
/// [`FormError`] with the file and field of the first problem.
pub fn load_form_str(text: &str, format: FileFormat, file: &str) -> Result<Form, FormError> {
    let raw = match format {
        FileFormat::Json => {
            parse_json(text).map_err(|e| crate::kind::not_a_form(text).unwrap_or(e))
        }
        FileFormat::Csv => parse_csv(text),
    }
    .map_err(|e| e.in_file(file))?;
    validate(raw, &default_name(file)).map_err(|e| e.in_file(file))
}

/// The stem of a file name (`worksheets/x.json` → `x`).
pub fn default_name(file: &str) -> String {
    std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_owned())
}

/// A blank form for `question` (all kinds' fields when `None`), named `name`.
pub fn blank(question: Option<QuestionKind>, name: Option<&str>) -> RawForm {
    RawForm {
        format: FORMAT_NAME.to_owned(),
        version: FORMAT_VERSION,
        name: name.map(str::to_owned),
        question,
        ..RawForm::default()
    }
}
