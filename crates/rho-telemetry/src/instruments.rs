//! rho's metrics: counters of prompts, model requests, tokens (by type), cost and tool calls
//! (by tool and outcome), and histograms of how long model requests and tool calls take.

use opentelemetry::metrics::{Counter, Histogram, Meter};

pub(crate) struct Instruments {
    pub prompts: Counter<u64>,
    pub model_requests: Counter<u64>,
    pub tokens: Counter<u64>,
    pub cost: Counter<f64>,
    pub tool_calls: Counter<u64>,
    pub model_request_duration: Histogram<f64>,
    pub tool_call_duration: Histogram<f64>,
}

impl Instruments {
    pub(crate) fn new(meter: &Meter) -> Self {
        Self {
            prompts: meter
                .u64_counter("rho.prompt.count")
                .with_unit("{prompt}")
                .with_description("Prompts run")
                .build(),
            model_requests: meter
                .u64_counter("rho.model_request.count")
                .with_unit("{request}")
                .with_description("Model requests made")
                .build(),
            tokens: meter
                .u64_counter("rho.token.usage")
                .with_unit("{token}")
                .with_description("Tokens used, by gen_ai.token.type (input, output, cache_read, cache_write)")
                .build(),
            cost: meter
                .f64_counter("rho.cost.usage")
                .with_unit("USD")
                .with_description("Cost of the model requests, in US dollars")
                .build(),
            tool_calls: meter
                .u64_counter("rho.tool_call.count")
                .with_unit("{call}")
                .with_description("Tool calls, by tool and outcome")
                .build(),
            model_request_duration: meter
                .f64_histogram("rho.model_request.duration")
                .with_unit("s")
                .with_description("How long a model request took, from sending it to its last event")
                .build(),
            tool_call_duration: meter
                .f64_histogram("rho.tool_call.duration")
                .with_unit("s")
                .with_description("How long a tool call ran")
                .build(),
        }
    }
}
