//! The limitation labels of ../shared/spec/interface.md.

/// What limited a flow (or one period of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    ReceiverWindow,
    Cwnd,
    Bottleneck,
    Sender,
}

impl Label {
    pub const ALL: [Label; 4] = [Label::ReceiverWindow, Label::Cwnd, Label::Bottleneck, Label::Sender];

    pub fn as_str(self) -> &'static str {
        match self {
            Label::ReceiverWindow => "receiver-window-limited",
            Label::Cwnd => "cwnd-limited",
            Label::Bottleneck => "bottleneck-limited",
            Label::Sender => "sender-limited",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

pub const UNDETERMINED: &str = "undetermined";
