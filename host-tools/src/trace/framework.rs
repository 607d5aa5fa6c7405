//! Names a framework's firmware gives its contexts and resources, as users know them.
//!
//! - A context named by a `ContextName` event (`J name t= a= n=`) carries the type name of
//!   its code, read from the image: RTIC's async task `app::worker`'s future is
//!   `app::worker::{{closure}}`, a hardware task's body is the `exec` function inside the
//!   handler named after its interrupt (`app::UART0::exec`), a dispatcher's body a closure
//!   in its interrupt's handler (`app::SSI0::{{closure}}`). The user's name is the last path
//!   segment that is none of these wrappers: `worker`, `UART0`, `SSI0`; the ELF's debug
//!   information names a hardware task better, after the function its `exec` calls
//!   (`Firmware::context_name`: `uart_rx`).
//! - RTIC's resources are statics of the expansion named `__rtic_internal_shared_resource_X`
//!   (and `__rtic_internal_local_resource_X`): the user's field name is `X`.

/// The user's name of a context whose code has the type name `type_name`.
pub fn context_name(type_name: &str) -> String {
    let mut segments: Vec<&str> = split_path(type_name);
    while let Some(last) = segments.last() {
        if matches!(*last, "{{closure}}" | "exec" | "{{constant}}") || last.starts_with('{') {
            segments.pop();
        } else {
            break;
        }
    }
    segments
        .last()
        .map_or_else(|| type_name.to_owned(), |s| s.to_string())
}

/// `a::b<c::d>::e` → `["a", "b<c::d>", "e"]`: `::` outside generic brackets.
pub(crate) fn split_path(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' => depth += 1,
            b'>' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => {
                out.push(&path[start..i]);
                i += 2;
                start = i;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&path[start..]);
    out
}

/// The user's name of a data symbol that is a framework's resource (`counter` for
/// `app::__rtic_internal_shared_resource_counter`) or task (`worker` for its executor,
/// `app::__rtic_internal_worker_EXEC`), if it is one.
pub fn resource_name(symbol: &str) -> Option<String> {
    if let Some(task) = split_path(symbol)
        .pop()
        .and_then(|s| s.strip_prefix("__rtic_internal_"))
        .and_then(|s| s.strip_suffix("_EXEC"))
    {
        return Some(task.to_owned());
    }
    const PREFIXES: [&str; 2] = [
        "__rtic_internal_shared_resource_",
        "__rtic_internal_local_resource_",
    ];
    let last = split_path(symbol).pop()?;
    let (head, offset) = match last.split_once('+') {
        Some((h, o)) => (h, Some(o)),
        None => (last, None),
    };
    let name = PREFIXES.iter().find_map(|p| head.strip_prefix(p))?;
    Some(match offset {
        Some(o) => format!("{name}+{o}"),
        None => name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_are_named_after_the_task_or_its_interrupt() {
        assert_eq!(
            context_name("rticspike::app::worker::{{closure}}"),
            "worker"
        );
        assert_eq!(context_name("rticspike::app::UART0::exec"), "UART0");
        assert_eq!(context_name("fw::app::SSI0::{{closure}}"), "SSI0");
        assert_eq!(
            context_name("fw::app::tick::{{closure}}::{{closure}}"),
            "tick"
        );
        assert_eq!(context_name("worker"), "worker");
    }

    #[test]
    fn resources_are_named_by_their_field() {
        assert_eq!(
            resource_name("rticspike::app::__rtic_internal_shared_resource_counter").as_deref(),
            Some("counter")
        );
        assert_eq!(
            resource_name("fw::app::__rtic_internal_shared_resource_buf+4").as_deref(),
            Some("buf+4")
        );
        assert_eq!(resource_name("fw::app::STATE"), None);
        assert_eq!(
            resource_name("fw::app::__rtic_internal_worker_EXEC").as_deref(),
            Some("worker")
        );
    }
}
