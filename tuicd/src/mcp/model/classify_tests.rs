//! [`classify`] against a `Value`-tree classifier as the reference, on well-formed, odd and
//! malformed bodies: the same outcome, error codes and messages included. Where the two differ on
//! purpose (a member given twice, a fault inside a member nobody reads) the tests say so.

use serde_json::{Map, Value};

use super::*;

/// What the reference answers: (id, method, params); `Value::Null` and "" where there are none.
type Classified = (Value, String, Option<Map<String, Value>>);

/// The reference: parse a `Value`, then look at its members.
fn reference(body: &[u8]) -> Result<Classified, RpcError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| RpcError::new(code::PARSE_ERROR, format!("Parse error: the body is not valid JSON: {e}")))?;
    let Value::Object(mut object) = value else {
        let what = if value.is_array() {
            "batches are not supported; send one message per POST"
        } else {
            "a JSON object was expected"
        };
        return Err(RpcError::new(code::INVALID_REQUEST, format!("Invalid Request: {what}")));
    };
    match object.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        _ => return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"")),
    }
    let method = match object.remove("method") {
        None => None,
        Some(Value::String(m)) => Some(m),
        Some(_) => return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"method\" must be a string")),
    };
    match (method, object.remove("id")) {
        // A notification, as (null, method, None).
        (Some(method), None) => Ok((Value::Null, method, None)),
        (Some(method), Some(id @ (Value::String(_) | Value::Number(_)))) => {
            let params = object.remove("params");
            if params.as_ref().is_some_and(|p| !p.is_object()) {
                return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"params\" must be an object"));
            }
            Ok((id, method, params.map(|p| p.as_object().cloned().unwrap())))
        }
        (Some(_), Some(_)) => {
            Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"id\" must be a string or an integer"))
        }
        // A response, as (null, "", None).
        (None, _) if object.contains_key("result") || object.contains_key("error") => {
            Ok((Value::Null, String::new(), None))
        }
        (None, _) => {
            Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: no \"method\", \"result\" or \"error\""))
        }
    }
}

/// `tools/call` params as the reference reads them; `null` arguments are no arguments.
fn call_of(params: Option<Map<String, Value>>) -> CallParams {
    let mut params = params.unwrap_or_default();
    CallParams { name: params.remove("name"), arguments: params.remove("arguments").filter(|a| !a.is_null()) }
}

fn check(body: &str) {
    let expected = reference(body.as_bytes());
    let ours = classify(body.as_bytes());
    match (ours, expected) {
        (Err(ours), Err(expected)) => assert_eq!(ours, expected, "body: {body}"),
        (Ok(Incoming::Notification { method }), Ok((Value::Null, expected, None))) => {
            assert_eq!(method, expected, "body: {body}")
        }
        (Ok(Incoming::Response), Ok((Value::Null, expected, None))) => assert_eq!(expected, "", "body: {body}"),
        (Ok(Incoming::Request { id, method, params }), Ok((expected_id, expected_method, expected_params))) => {
            let id: Value = serde_json::from_str(id.get()).unwrap();
            assert_eq!((&id, method.as_str()), (&expected_id, expected_method.as_str()), "body: {body}");
            if method == TOOLS_CALL {
                let mut ours = params.map(Params::into_call).transpose().unwrap().unwrap_or_default();
                ours.arguments = ours.arguments.filter(|a| !a.is_null());
                assert_eq!(ours, call_of(expected_params), "body: {body}");
            } else {
                assert_eq!(params_object(params).unwrap(), expected_params.unwrap_or_default(), "body: {body}");
            }
        }
        (ours, expected) => panic!("body: {body}\nours: {ours:?}\nexpected: {expected:?}"),
    }
}

#[test]
fn well_formed_and_odd_messages_classify_as_before() {
    let bodies = [
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session","arguments":{"action":"status","session_id":"5acc7dd1"}}}"#,
        r#"{"id":2,"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"action":"status"},"name":"session"}}"#,
        r#"{"params":{"name":"session","arguments":{"action":"list"}},"id":"a","method":"tools/call","jsonrpc":"2.0"}"#,
        r#" { "jsonrpc" : "2.0" , "id" : 1 , "method" : "tools\/call" , "params" : { "name" : "ses\u0073ion" } } "#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s","arguments":null,"x":[1,{"y":2}]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s","arguments":[1]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":{"a":1}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"claude/channel":{}}},"clientInfo":{"name":"c"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":-1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"\u00e9\n","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":[]}"#,
        r#"{"jsonrpc":"2.0","method":null}"#,
        r#"{"jsonrpc":"2.0","method":1,"id":1}"#,
        r#"{"jsonrpc":"2.0","method":{"x":[]},"id":1}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","result":null}"#,
        r#"{"jsonrpc":"2.0","id":3}"#,
        r#"{"jsonrpc":"2.0"}"#,
        r#"{"id":1,"method":"x"}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
        r#"{"jsonrpc":2.0,"id":1,"method":"x"}"#,
        r#"{"jsonrpc":["2.0"],"id":1,"method":"x"}"#,
        r#"{"jsonrpc":"2\u002e0","id":1,"method":"x"}"#,
        r#"{"\u006asonrpc":"2.0","i\u0064":1,"\u006dethod":"tools/call","params":{"n\u0061me":"s"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","extra":{"deep":[[[{"a":[true,false,null,-0.5e-3]}]]]}}"#,
        "{}",
        "[]",
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        "1",
        "-2.5",
        r#""x""#,
        "null",
        "true",
        " \n\t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n",
    ];
    for body in bodies {
        check(body);
    }
}

#[test]
fn malformed_bodies_fail_with_the_same_parse_errors() {
    let bodies = [
        "".to_owned(),
        "   ".to_owned(),
        "{nope".to_owned(),
        "{".to_owned(),
        r#"{"jsonrpc":"2.0","#.to_owned(),
        r#"{"jsonrpc":"2.0",}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}{}"#.to_owned(),
        r#"{1:2}"#.to_owned(),
        r#"[1,2"#.to_owned(),
        r#"[1,]"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":01,"method":"ping"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":01}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":-}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":-}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":1.}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":"\q"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":tru}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":nul}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":{"a" 1}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":[1 2]}"#.to_owned(),
    ];
    for body in &bodies {
        check(body);
    }
    // A control character in a string nobody reads: the same error, found one column earlier by
    // the parser that skips the member.
    for body in [
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"tab\there\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"q\":\"nl\nhere\"}}",
    ] {
        let (ours, expected) = (classify(body.as_bytes()).unwrap_err(), reference(body.as_bytes()).unwrap_err());
        assert_eq!(ours.code, expected.code, "{body}");
        assert_eq!(ours.message.split(" at line").next(), expected.message.split(" at line").next(), "{body}");
    }
    let invalid_utf8 = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}";
    let error = classify(invalid_utf8).unwrap_err();
    assert_eq!(error.code, reference(invalid_utf8).unwrap_err().code);
    assert!(error.message.contains("not UTF-8"), "{}", error.message);
}

#[test]
fn tools_call_params_are_read_into_their_fields() {
    let body = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session","arguments":{"action":"status"}}}"#;
    let Ok(Incoming::Request { params: Some(params), .. }) = classify(body) else {
        panic!("tools/call should have params");
    };
    let call = params.into_call().unwrap();
    assert_eq!(call.name, Some(serde_json::json!("session")));
    assert_eq!(call.arguments, Some(serde_json::json!({"action": "status"})));
}

#[test]
fn the_id_is_echoed_as_the_client_wrote_it() {
    for id in ["1", "-7", "1e3", "1.50", r#""a\u0062""#, "18446744073709551616"] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let Ok(Incoming::Request { id: raw, .. }) = classify(body.as_bytes()) else { panic!("{body}") };
        assert_eq!(raw.get(), id);
        let response: String = String::from_utf8(result_body(raw, &Reply::Value(serde_json::json!({})))).unwrap();
        assert!(response.contains(&format!(r#""id":{id}"#)), "{response}");
    }
}

/// Members must be unique: a body that gives one twice is refused, naming the member, where the
/// reference took the last one.
#[test]
fn a_member_given_twice_is_refused_naming_it() {
    let bodies = [
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"method":"ping"}"#, "method"),
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"name":"a"},"method":"tools/call"}"#, "method"),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"params":{"name":"b"}}"#, "params"),
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[],"method":"ping"}"#, "method"),
        (r#"{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"x"}"#, "jsonrpc"),
        (r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#, "id"),
    ];
    for (body, member) in bodies {
        let error = classify(body.as_bytes()).unwrap_err();
        assert_eq!(error.code, code::INVALID_REQUEST, "{body}");
        assert!(error.message.contains(&format!("duplicate field `{member}`")), "{body}: {}", error.message);
    }
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#;
    let Ok(Incoming::Request { params: Some(params), .. }) = classify(body) else { panic!("well-formed") };
    let error = params.into_call().unwrap_err();
    assert_eq!(error.code, code::INVALID_PARAMS);
    assert!(error.message.contains("duplicate field `name`"), "{}", error.message);
}

/// A member the endpoint does not read is checked for syntax only: a number beyond `f64`, a lone
/// surrogate or deep nesting there is not an error (the reference refused them as parse errors).
/// Inside params the method reads, the same faults are invalid params.
#[test]
fn faults_inside_members_nobody_reads_are_not_errors() {
    let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
    for x in ["1e400".to_owned(), r#""\ud800""#.to_owned(), deep(300)] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","x":{x}}}"#);
        assert!(reference(body.as_bytes()).is_err(), "{body}");
        assert!(
            matches!(classify(body.as_bytes()), Ok(Incoming::Request { method, .. }) if method == "ping"),
            "{body}"
        );
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"x":{x}}}}}"#);
        let Ok(Incoming::Request { params: Some(params), .. }) = classify(body.as_bytes()) else { panic!("{body}") };
        assert_eq!(params.into_object().unwrap_err().code, code::INVALID_PARAMS, "{body}");
    }
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"s","arguments":{}}}}}"#,
        deep(200)
    );
    let Ok(Incoming::Request { params: Some(params), .. }) = classify(body.as_bytes()) else { panic!("{body}") };
    let error = params.into_call().unwrap_err();
    assert_eq!(error.code, code::INVALID_PARAMS);
    assert!(error.message.contains("recursion limit"), "{}", error.message);
}
